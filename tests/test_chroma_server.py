"""A real local Chroma server (``chroma run`` on 127.0.0.1): index and query through it via DIAGNOSE_CHROMA_URL."""

from __future__ import annotations

import shutil
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from diagnose.encyclopedia.entries import load_entries
from diagnose.encyclopedia.index import open_index
from diagnose.encyclopedia.retrieval import query_text
from diagnose.settings import load_settings
from tests.servers import free_port, http_ok, running

pytest.importorskip("chromadb")

READY_TIMEOUT_S = 30.0


def _chroma_binary() -> str:
    beside_python = Path(sys.executable).parent / "chroma"
    found = str(beside_python) if beside_python.exists() else shutil.which("chroma")
    if found is None:
        pytest.fail("the `chroma` command (installed with chromadb) is not next to the Python running the tests")
    return found


@pytest.fixture
def chroma_url(tmp_path: Path) -> Iterator[str]:
    """Start ``chroma run`` with a temporary --path on a free loopback port; stop it afterwards."""
    port = free_port()
    url = f"http://127.0.0.1:{port}"
    argv = [_chroma_binary(), "run", "--path", str(tmp_path / "chroma"), "--host", "127.0.0.1", "--port", str(port)]
    with running(
        argv, log_path=tmp_path / "chroma.log", ready=http_ok(f"{url}/api/v2/heartbeat"), what="chroma", timeout_s=READY_TIMEOUT_S
    ):
        yield url


@pytest.mark.server
def test_index_and_query_through_a_chroma_server(chroma_url: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    home = tmp_path / "home"
    monkeypatch.setenv("DIAGNOSE_HOME", str(home))
    monkeypatch.setenv("DIAGNOSE_CHROMA_URL", chroma_url)
    settings = load_settings()
    assert settings.chroma_url == chroma_url

    index = open_index(settings)
    stats = index.ensure()
    assert stats is not None and stats.location == chroma_url and stats.passages > 0

    entry = next(e for e in load_entries(settings.kb_dir) if e.signatures)
    examples = [line for signature in entry.signatures for line in signature.examples]
    passages = index.search(query_text(examples), k=3)
    assert entry.id in [p.entry_id for p in passages]
    assert all(p.section and p.text for p in passages)

    again = open_index(load_settings())
    assert again.is_current(), "the content hash is kept in the server's collection metadata"
    assert again.ensure() is None
    assert not (home / "index").exists(), "with a server URL nothing is written to the embedded index"
