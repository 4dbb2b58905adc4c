"""The embedded index: built in a temporary DIAGNOSE_HOME, rebuilt when kb/ changes, passages carry id and section."""

from __future__ import annotations

import base64
import json
import shutil
import subprocess
import sys
import textwrap
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest

from diagnose.bundled import kb_dir
from diagnose.encyclopedia.embedding import HashEmbedding, LiteLLMEmbedding, Specificity, features, normalize
from diagnose.encyclopedia.entries import SECTIONS, Entry, Signature, load_entries
from diagnose.encyclopedia.index import COLLECTION, SKIPPED_SECTIONS, KBIndex, open_index
from diagnose.encyclopedia.retrieval import excerpt, query_text, retrieve, signature_hits
from diagnose.settings import Settings, load_settings

pytest.importorskip("chromadb")

REPO = Path(__file__).resolve().parent.parent


@pytest.fixture
def kb_copy(tmp_path: Path) -> Path:
    """A private copy of the encyclopedia, safe to edit."""
    target = tmp_path / "kb"
    shutil.copytree(kb_dir(load_settings().kb_dir) / "entries", target / "entries")
    return target


@pytest.fixture
def index(tmp_path: Path, kb_copy: Path, monkeypatch: pytest.MonkeyPatch) -> KBIndex:
    """An embedded index under a temporary DIAGNOSE_HOME."""
    monkeypatch.setenv("DIAGNOSE_HOME", str(tmp_path / "home"))
    monkeypatch.delenv("DIAGNOSE_CHROMA_URL", raising=False)
    return open_index(Settings(kb_dir=kb_copy))


def test_normalize_keeps_the_message_shape_only() -> None:
    one = "[rank3]:[E1218 20:27:21.426415540 ProcessGroupNCCL.cpp:629] GPU 5 on <HOST_3> at 0x7f3a12bc00 tried 2.00 GiB"
    two = "[rank12]:[E0101 01:02:03.000000001 ProcessGroupNCCL.cpp:1794] GPU 0 on <HOST_17> at 0xdeadbeef tried 17.5 GiB"
    assert normalize(one) == normalize(two)
    assert "<HOST>" in normalize(one) and "<ADDR>" in normalize(one)
    assert "fp16" in normalize("fp16 overflow on A100")
    assert normalize('File "/home/<USER_1>/venv/lib/python3.11/site-packages/torch/cuda/memory.py"') == ('File "torch/cuda/memory.py"')
    assert "/dev/shm" in normalize("No space left on device: /dev/shm/torch_1234")


def test_hash_embedding_is_deterministic_unit_length_and_rebuildable() -> None:
    embedder = HashEmbedding()
    first, second = embedder(["NCCL watchdog timeout on rank 3", "NCCL watchdog timeout on rank 7"])
    assert first.shape == (embedder.dim,)
    assert abs(float((first * first).sum()) - 1.0) < 1e-5
    assert (first == second).all(), "numbers are normalised away before hashing"
    rebuilt = HashEmbedding.build_from_config(embedder.get_config())
    assert (rebuilt(["NCCL watchdog timeout on rank 3"])[0] == first).all()


def test_build_then_ensure_is_a_no_op(index: KBIndex, kb_copy: Path) -> None:
    stats = index.ensure()
    assert stats is not None, "first use builds the index"
    entries = load_entries(kb_copy)
    assert stats.entries == len(entries)
    expected = sum(1 for e in entries for name, body in e.sections.items() if body.strip() and name not in SKIPPED_SECTIONS)
    assert stats.passages == expected
    assert index.ensure() is None, "an unchanged kb/ is not rebuilt"
    assert index.is_current()


def test_kb_change_triggers_a_rebuild(index: KBIndex, kb_copy: Path) -> None:
    first = index.ensure()
    assert first is not None
    victim = sorted((kb_copy / "entries").glob("*.md"))[0]
    edited = victim.read_text(encoding="utf-8").replace("## What it is\n", "## What it is\n\nQuokka migrations.\n", 1)
    victim.write_text(edited, encoding="utf-8")
    reopened = open_index(Settings(kb_dir=kb_copy))
    assert not reopened.is_current()
    second = reopened.ensure()
    assert second is not None and second.content_hash != first.content_hash
    assert reopened.ensure() is None
    assert reopened.search("quokka migrations", k=1)[0].entry_id == victim.stem, "the rebuild indexed the edit"


def test_an_index_rebuilt_by_another_process_is_reopened_not_an_error(index: KBIndex, kb_copy: Path) -> None:
    """A long-running ``diagnose serve`` keeps answering after ``diagnose kb index`` rebuilt the index for an edited kb/."""
    assert index.ensure() is not None
    assert index.search("CUDA out of memory", k=1)
    victim = sorted((kb_copy / "entries").glob("*.md"))[0]
    edited = victim.read_text(encoding="utf-8").replace("## What it is\n", "## What it is\n\nQuokka migrations.\n", 1)
    victim.write_text(edited, encoding="utf-8")
    assert open_index(Settings(kb_dir=kb_copy)).ensure() is not None  # the other process: deletes and recreates
    assert index.search("quokka migrations", k=1)[0].entry_id == victim.stem


def test_passages_carry_entry_id_and_section(index: KBIndex, kb_copy: Path) -> None:
    entries = {e.id: e for e in load_entries(kb_copy)}
    entry = next(iter(entries.values()))
    passages = index.search(entry.section("What it is"), k=5)
    assert passages and passages[0].entry_id == entry.id
    assert len({p.entry_id for p in passages}) == len(passages), "one passage per entry"
    for passage in passages:
        assert passage.section in SECTIONS and passage.section not in SKIPPED_SECTIONS
        assert passage.text == entries[passage.entry_id].section(passage.section)
        assert -1.0 <= passage.score <= 1.0
    assert [p.score for p in passages] == sorted((p.score for p in passages), reverse=True)


def test_search_restricted_to_entries(index: KBIndex, kb_copy: Path) -> None:
    ids = [e.id for e in load_entries(kb_copy)][:2]
    passages = index.search("a collective timed out", k=5, entry_ids=ids)
    assert {p.entry_id for p in passages} <= set(ids)
    assert index.search("a collective timed out", entry_ids=[]) == []
    assert index.search("   ") == []


def test_retrieve_puts_signature_hits_first(index: KBIndex, kb_copy: Path) -> None:
    entries = load_entries(kb_copy)
    target = entries[-1]
    passages = retrieve([entries[0].title], [target.id], index, k=3)
    assert passages[0].entry_id == target.id
    assert len(passages) == 3 and len({p.entry_id for p in passages}) == 3
    assert retrieve([], [target.id], index) == []


def test_excerpt_picks_the_line_nearest_the_query() -> None:
    text = "\n".join(
        [
            "| Symptom | Why it happens |",
            "|---|---|",
            "| disk quota exceeded | the disk is full |",
            "| Bus error in a worker | /dev/shm too small |",
        ]
    )
    assert excerpt(text, "DataLoader worker killed by signal: Bus error") == "| Bus error in a worker | /dev/shm too small |"
    assert excerpt("```bash\n```", "anything") == ""


def test_query_text_drops_repeats_across_ranks() -> None:
    lines = [f"[rank{r}]:[E1218 20:27:21.4264 ProcessGroupNCCL.cpp:629] [Rank {r}] Watchdog caught collective" for r in range(8)]
    assert query_text(lines).count("Watchdog") == 1


def test_reopened_collection_keeps_the_offline_embedder(index: KBIndex, kb_copy: Path, tmp_path: Path) -> None:
    """A new process opening the collection through chromadb gets diagnose-hash back, not the downloading default."""
    index.ensure()
    script = textwrap.dedent(
        f"""
        import chromadb
        from chromadb.config import Settings
        import diagnose.encyclopedia.index as ix
        ix._register()
        path = {str(tmp_path / "home" / "index")!r}
        client = chromadb.PersistentClient(path=path, settings=Settings(anonymized_telemetry=False))
        collection = client.get_collection({COLLECTION!r})
        print(collection.query(query_texts=["watchdog"], n_results=1)["ids"][0][0])
        """
    )
    result = _offline_python(script, tmp_path)
    assert result.returncode == 0, result.stderr
    assert "#" in result.stdout


def test_search_works_with_the_network_blocked(index: KBIndex, kb_copy: Path, tmp_path: Path) -> None:
    script = textwrap.dedent(
        f"""
        from pathlib import Path
        from diagnose.encyclopedia.index import open_index
        from diagnose.settings import Settings, load_settings
        index = open_index(Settings(kb_dir=Path({str(kb_copy)!r})))
        index.ensure()
        print(index.search("CUDA out of memory. Tried to allocate 2.00 GiB", k=1)[0].entry_id)
        """
    )
    result = _offline_python(script, tmp_path)
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip()


def _offline_python(script: str, tmp_path: Path) -> subprocess.CompletedProcess[str]:
    """Run ``script`` in a new interpreter whose DNS lookups fail loudly for anything but loopback."""
    guard = tmp_path / "guard"
    guard.mkdir(exist_ok=True)
    (guard / "sitecustomize.py").write_text(
        textwrap.dedent(
            """
            import socket, traceback
            _real = socket.getaddrinfo
            def _guarded(host, *args, **kwargs):
                if host not in ("localhost", "127.0.0.1", "::1", None):
                    traceback.print_stack()
                    raise OSError(f"network blocked in test: lookup of {host}")
                return _real(host, *args, **kwargs)
            socket.getaddrinfo = _guarded
            """
        ),
        encoding="utf-8",
    )
    env = {
        "PATH": "/usr/bin:/bin",
        "PYTHONPATH": f"{guard}:{REPO}",
        "DIAGNOSE_HOME": str(tmp_path / "home"),
        "HOME": str(tmp_path),
    }
    return subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, env=env, timeout=120, check=False)


class _FakeEmbeddings(BaseHTTPRequestHandler):
    """An OpenAI-compatible /v1/embeddings endpoint that answers with small hashed vectors."""

    disable_nagle_algorithm = True

    def do_POST(self) -> None:
        body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        texts = body["input"] if isinstance(body["input"], list) else [body["input"]]
        vectors = HashEmbedding(dim=64)(texts)
        as_base64 = body.get("encoding_format") == "base64"
        data = [
            {
                "object": "embedding",
                "index": i,
                "embedding": base64.b64encode(vector.tobytes()).decode() if as_base64 else vector.tolist(),
            }
            for i, vector in enumerate(vectors)
        ]
        usage = {"prompt_tokens": len(texts), "total_tokens": len(texts)}
        payload = json.dumps({"object": "list", "data": data, "model": body["model"], "usage": usage}).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(payload)))
        self.end_headers()
        self.wfile.write(payload)

    def log_message(self, format: str, *args: object) -> None:
        """Quiet."""


@pytest.fixture
def embeddings_server() -> Iterator[str]:
    """The api_base of a local fake embedding server."""
    server = ThreadingHTTPServer(("127.0.0.1", 0), _FakeEmbeddings)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_port}/v1"
    finally:
        server.shutdown()
        server.server_close()


def test_litellm_embedder_when_configured(index: KBIndex, kb_copy: Path, embeddings_server: str, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "not-a-real-key")
    monkeypatch.setenv("LITELLM_LOCAL_MODEL_COST_MAP", "True")
    monkeypatch.setenv("LITELLM_OFFLINE_MODE", "true")
    assert index.ensure() is not None
    remote = open_index(Settings(kb_dir=kb_copy, embedding_model="openai/fake-embed", api_base=embeddings_server))
    assert isinstance(remote.embedder, LiteLLMEmbedding)
    assert not remote.is_current(), "a different embedder makes the index stale"
    stats = remote.ensure()
    assert stats is not None and stats.embedder == "diagnose-litellm"
    entry = load_entries(kb_copy)[0]
    assert remote.search(entry.section("What it is"), k=1)[0].entry_id == entry.id
    assert not index.is_current(), "switching back to hashing rebuilds again"


def test_signature_hits_rank_by_evidence() -> None:
    def entry(entry_id: str, *signatures: tuple[str, float]) -> Entry:
        sigs = [Signature(pattern=p, role="initiating", weight=w, examples=["x"]) for p, w in signatures]
        return Entry(id=entry_id, title=entry_id, signatures=sigs)

    fd_limit = entry("fd-limit", (r"Too many open files", 0.95))
    worker = entry("worker", (r"Too many open files", 0.85), (r"DataLoader worker \(pid \d+\) exited", 0.6))
    crash = "RuntimeError: DataLoader worker (pid 4242) exited unexpectedly"
    files = "RuntimeError: Too many open files. Communication with the workers is no longer possible."
    assert signature_hits([files], [fd_limit, worker]) == ["fd-limit", "worker"]
    assert signature_hits([files, crash], [fd_limit, worker]) == ["worker", "fd-limit"], "more lines explained wins"
    repeated = [crash.replace("4242", str(pid)) for pid in range(5)]
    assert signature_hits([files, *repeated], [fd_limit, worker]) == ["worker", "fd-limit"]
    assert signature_hits(repeated, [entry("other", (r"exited unexpectedly", 0.65)), worker]) == ["other", "worker"], (
        "one line shape counts once, however many ranks print it"
    )
    assert signature_hits(["nothing here"], [fd_limit, worker]) == []


def test_cli_index_and_search(kb_copy: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from typer.testing import CliRunner

    from diagnose.cli import app

    monkeypatch.setenv("DIAGNOSE_HOME", str(tmp_path / "cli-home"))
    monkeypatch.setenv("DIAGNOSE_KB_DIR", str(kb_copy))
    runner = CliRunner()
    built = runner.invoke(app, ["kb", "index", "--json"])
    assert built.exit_code == 0, built.output
    stats = json.loads(built.stdout)
    assert stats["entries"] == len(load_entries(kb_copy)) and stats["passages"] > 0
    entry = next(e for e in load_entries(kb_copy) if e.signatures)
    found = runner.invoke(app, ["kb", "search", entry.signatures[0].examples[0], "--json", "-k", "3"])
    assert found.exit_code == 0, found.output
    passages = json.loads(found.stdout)
    assert passages[0]["entry_id"] == entry.id and {"entry_id", "section", "text", "score"} <= set(passages[0])
    text = runner.invoke(app, ["kb", "search", entry.title])
    assert text.exit_code == 0 and entry.id in text.stdout


def test_nearest_examples_leave_out_the_signatures_named(index: KBIndex, kb_copy: Path) -> None:
    entry = next(e for e in load_entries(kb_copy) if e.kind == "root-cause" and any(s.role == "initiating" for s in e.signatures))
    signature = next(s for s in entry.signatures if s.role == "initiating")
    line = signature.examples[0]
    [hits] = index.nearest_examples([line], k=3)
    assert hits[0].entry_id == entry.id and hits[0].score == pytest.approx(1.0, abs=1e-3) and hits[0].signature == signature.pattern
    assert [h.score for h in hits] == sorted((h.score for h in hits), reverse=True)
    [held_out] = index.nearest_examples([line], without=[signature.pattern], k=5)
    assert held_out and all(h.signature != signature.pattern for h in held_out)
    assert index.nearest_examples(["", "  "]) == [[], []]


def test_specificity_weighs_what_tells_entries_apart_over_shared_boilerplate() -> None:
    specificity = Specificity(
        {
            "host-oom": ["RuntimeError: DataLoader worker (pid 1) is killed by signal: Killed."],
            "segfault": ["RuntimeError: DataLoader worker (pid 2) is killed by signal: Segmentation fault."],
            "shm": ["ERROR: Unexpected bus error encountered in worker. This might be caused by insufficient shared memory (shm)."],
        }
    )
    line = specificity.weigh("RuntimeError: DataLoader worker (pid 9) is killed by signal: Bus error.")
    scores = {text: Specificity.cosine(line, specificity.weigh(text)) for text in ("killed by signal: Killed.", "unexpected bus error")}
    plain = features("RuntimeError: DataLoader worker (pid 9) is killed by signal: Bus error.")
    assert Specificity.cosine(plain, features("RuntimeError: DataLoader worker (pid 1) is killed by signal: Killed.")) > 0.5
    assert scores["unexpected bus error"] > scores["killed by signal: Killed."]
    assert Specificity.cosine({}, line) == 0.0
