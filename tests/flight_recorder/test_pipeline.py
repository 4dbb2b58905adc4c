"""Flight Recorder dumps through the product: ``diagnose log DUMPDIR``, archives, dumps beside logs, the JSON contract."""

from __future__ import annotations

import io
import json
import pickle
import shutil
import subprocess
import sys
import tarfile
import zipfile
from pathlib import Path
from typing import Any

import pytest

from diagnose.errors import InputError
from diagnose.parse.ingest import resolve_sources
from diagnose.pipeline import diagnose

from .conftest import FIXTURES
from .test_no_leaks import PLANTED, _planted_run

WATCHDOG = (
    "[rank{r}]:[E1128 14:34:21.477019 ProcessGroupNCCL.cpp:616] [Rank {r}] Watchdog caught collective operation timeout: "
    "WorkNCCL(SeqNum=12, OpType=ALLREDUCE, NumelIn=1024, NumelOut=1024, Timeout(ms)=600000) ran for 600041 milliseconds "
    "before timing out.\n"
)


def cli(*args: str) -> subprocess.CompletedProcess[str]:
    """``diagnose ARGS`` in a subprocess, offline, without the vector index."""
    command = [sys.executable, "-m", "diagnose", *args]
    if args[0] == "log":
        command.append("--no-retrieval")
    return subprocess.run(command, capture_output=True, text=True, timeout=300)


def hang(generator: Any, folder: Path, world: int, stalled: tuple[int, ...], form: str = "json") -> Path:
    """A ``world``-rank hang: every rank but ``stalled`` waits in all_reduce #12 of default_pg; the stalled ranks never enqueue it."""
    folder.mkdir(parents=True, exist_ok=True)
    groups = {"0": ("default_pg", list(range(world)))}
    for rank in range(world):
        entries = [] if rank in stalled else [generator.entry(100 + rank, ("0", "default_pg"), 12, "all_reduce", t=rank)]
        body = generator.dump(groups, {"0": (11 if rank in stalled else 12, 11)}, entries)
        (folder / f"_dump_{rank}").write_bytes(generator.encode(body, form))
    return folder


def copy_case(case: str, target: Path) -> Path:
    """A synthetic case's dumps (without its expected.json, which holds the answer)."""
    target.mkdir(parents=True, exist_ok=True)
    for dump in (FIXTURES / case).glob("_dump_*"):
        shutil.copy(dump, target / dump.name)
    return target


@pytest.mark.parametrize("run", ["gpu_error_2nd", "lock_gil_1st"])
def test_the_shared_runs_name_ranks_9_and_14_through_the_cli(run: str, fr_shared: Path, tmp_path: Path) -> None:
    svg = tmp_path / "timeline.svg"
    done = cli("log", str(fr_shared / run), "--json", "--timeline", str(svg))
    assert done.returncode == 0, done.stderr
    data = json.loads(done.stdout)
    assert data["initiating_ranks"] == [9, 14] and data["initiating_rank"] == 9
    assert data["root_cause"]["id"] == "nccl-timeout-hang"
    fr = data["flight_recorder"]
    assert fr["decided"] and fr["initiating_ranks"] == [9, 14] and fr["dumps"] == 16
    assert fr["process_group"] == "EXPERT_MODEL_PARALLEL_GROUP" and fr["collective"] == "all_to_all"
    dump_evidence = [e for e in data["evidence"] if e["kind"] == "dump"]
    assert {e["rank"] for e in dump_evidence} >= {9, 14}
    assert all(e["line"] == 0 and e["file"].startswith("_dump_") for e in dump_evidence)
    assert "rank 9" in svg.read_text(encoding="utf-8") and "rank 14" in svg.read_text(encoding="utf-8")


def test_the_text_report_names_the_ranks_the_group_and_the_collective(fr_shared: Path) -> None:
    done = cli("log", str(fr_shared / "lock_gil_1st"))
    assert done.returncode == 0, done.stderr
    assert "Initiating: ranks 9, 14" in done.stdout
    assert "at all_to_all #" in done.stdout and "process group EXPERT_MODEL_PARALLEL_GROUP" in done.stdout
    assert "_dump_9 pg_status  rank 9" in done.stdout and "_dump_8 record " in done.stdout


@pytest.mark.parametrize("form", ["json", "pickle"])
def test_dump_only_input_is_diagnosed(form: str, generator: Any, tmp_path: Path) -> None:
    result = diagnose([hang(generator, tmp_path / "dumps", 8, (5,), form)])
    d = result.diagnosis
    assert (d.root_cause.id, d.initiating_rank, d.initiating_ranks) == ("nccl-timeout-hang", 5, [5])
    assert d.flight_recorder is not None and d.flight_recorder.collective == "all_reduce" and d.flight_recorder.sequence == 12
    assert result.flight_recorder is not None and result.flight_recorder.stuck[0].entries[0].op == "all_reduce"
    assert d.evidence[0].kind == "dump" and d.evidence[0].rank == 5


def test_an_empty_input_without_dumps_is_still_an_error(tmp_path: Path) -> None:
    (tmp_path / "empty.log").write_text("\n\n", encoding="utf-8")
    with pytest.raises(InputError, match="empty"):
        diagnose([tmp_path / "empty.log"])


def test_a_mismatch_in_the_dumps_is_a_collective_mismatch(tmp_path: Path) -> None:
    d = diagnose([copy_case("mismatch_op", tmp_path / "case")]).diagnosis
    assert d.root_cause.id == "collective-mismatch"
    assert d.flight_recorder is not None and d.flight_recorder.kind == "mismatch"


def _archive(folder: Path, target: Path) -> Path:
    if target.suffix == ".zip":
        with zipfile.ZipFile(target, "w") as zf:
            for f in sorted(folder.iterdir()):
                zf.write(f, f"run/{f.name}")
    else:
        with tarfile.open(target, "w:gz") as tar:
            tar.add(folder, arcname="run")
    return target


@pytest.mark.parametrize("name", ["run.tar.gz", "run.zip"])
def test_an_archive_of_dumps_and_logs_is_read_whole(name: str, generator: Any, tmp_path: Path) -> None:
    folder = hang(generator, tmp_path / "run", 4, (3,))
    (folder / "rank0.log").write_text(WATCHDOG.format(r=0), encoding="utf-8")
    archive = _archive(folder, tmp_path / name)
    sources = resolve_sources([str(archive)])
    assert [s.kind for s in sources] == ["archive"]
    result = diagnose(sources)
    assert result.diagnosis.initiating_ranks == [3]
    assert result.log.sources == ["run/rank0.log"], "the text log inside the archive is read as a log"


def test_dumps_are_marked_by_content_not_read_as_text(generator: Any, tmp_path: Path) -> None:
    folder = hang(generator, tmp_path / "run", 4, (3,), "pickle")
    (folder / "events.jsonl").write_text('{"msg": "step 1", "loss": 2.0}\n', encoding="utf-8")
    with (folder / "rank1.log.gz").open("wb") as fh:
        import gzip

        fh.write(gzip.compress(WATCHDOG.format(r=1).encode()))
    kinds = {s.name: s.kind for s in resolve_sources([str(folder)])}
    assert kinds == {
        "_dump_0": "dump",
        "_dump_1": "dump",
        "_dump_2": "dump",
        "_dump_3": "dump",
        "events.jsonl": "log",
        "rank1.log.gz": "log",
    }


def test_the_logs_error_on_a_rank_the_dumps_name_wins(generator: Any, tmp_path: Path) -> None:
    folder = hang(generator, tmp_path / "run", 4, (3,))
    (folder / "rank3.log").write_text(
        "[rank3]: torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB. GPU 3 has a total capacity of "
        "79.15 GiB of which 1.06 GiB is free.\n",
        encoding="utf-8",
    )
    d = diagnose([folder]).diagnosis
    assert d.root_cause.id == "cuda-oom" and d.initiating_ranks == [3]
    assert d.flight_recorder is not None and not d.flight_recorder.decided
    assert any(e.kind == "dump" and e.rank == 3 for e in d.evidence)
    assert any(e.kind == "log" and "out of memory" in e.text for e in d.evidence)


def test_the_dumps_explain_a_hang_the_log_only_sees_as_timeouts(generator: Any, tmp_path: Path) -> None:
    folder = hang(generator, tmp_path / "run", 4, (2,))
    (folder / "train.log").write_text("".join(WATCHDOG.format(r=r) for r in (0, 1, 3)), encoding="utf-8")
    d = diagnose([folder]).diagnosis
    assert (d.root_cause.id, d.initiating_ranks) == ("nccl-timeout-hang", [2])
    assert d.flight_recorder is not None and d.flight_recorder.decided
    assert d.hang_reasoning is not None and "rank(s) [2]" in d.hang_reasoning


def test_a_hostile_pickle_beside_the_dumps_is_refused_by_the_cli(generator: Any, tmp_path: Path) -> None:
    folder = hang(generator, tmp_path / "run", 4, (3,))

    class Boom:
        def __reduce__(self) -> tuple[Any, ...]:
            return (print, ("owned",))

    (folder / "_dump_9").write_bytes(pickle.dumps({"version": "2.9", "entries": [Boom()]}, protocol=2))
    done = cli("log", str(folder), "--json")
    assert done.returncode == 2 and "refused a pickle" in done.stderr
    assert "Traceback" not in done.stderr and "owned" not in done.stdout + done.stderr


def test_a_path_traversal_archive_is_refused_by_the_cli(tmp_path: Path) -> None:
    archive = tmp_path / "run.tar.gz"
    with tarfile.open(archive, "w:gz") as tar:
        data = b'{"version": "2.9", "entries": []}'
        info = tarfile.TarInfo("../../etc/_dump_0")
        info.size = len(data)
        tar.addfile(info, io.BytesIO(data))
    done = cli("log", str(archive))
    assert done.returncode == 2 and "outside the archive" in done.stderr and "Traceback" not in done.stderr


@pytest.mark.parametrize("form", ["json", "pickle"])
def test_nothing_planted_in_a_dump_reaches_the_cli_json(form: str, generator: Any, tmp_path: Path) -> None:
    _planted_run(generator, tmp_path, form)
    svg = tmp_path.parent / f"planted-{form}.svg"
    done = cli("log", str(tmp_path), "--json", "--timeline", str(svg))
    assert done.returncode == 0, done.stderr
    data = json.loads(done.stdout)
    assert data["initiating_ranks"] == [3]
    assert data["redactions"]["total"] > 0, "the dumps' masks are counted"
    for value in PLANTED:
        for where, text in (("json", done.stdout), ("stderr", done.stderr), ("svg", svg.read_text(encoding="utf-8"))):
            assert value not in text, f"{value!r} leaked into the {where}"


@pytest.mark.parametrize("world", [8, 64, 512])
def test_the_timeline_renders_from_dumps_at_any_size(world: int, generator: Any, tmp_path: Path) -> None:
    import xml.etree.ElementTree as ET

    from diagnose.render.timeline_events import timeline_svg

    result = diagnose([hang(generator, tmp_path / "run", world, (world // 2 + 1, world - 1))])
    assert result.flight_recorder is not None
    svg = timeline_svg(result.diagnosis, result.log, result.flight_recorder.verdict)
    assert svg is not None
    root = ET.fromstring(svg)
    rows = [t.text or "" for t in root.iter("{http://www.w3.org/2000/svg}text")]
    assert f"rank {world // 2 + 1}" in rows and f"rank {world - 1}" in rows
    assert len(rows) < 80, "ranks that did the same thing share a row"


def test_one_dump_alone_names_no_rank(generator: Any, tmp_path: Path) -> None:
    folder = hang(generator, tmp_path / "run", 8, (5,))
    d = diagnose([folder / "_dump_2"]).diagnosis
    assert d.is_unknown and d.initiating_ranks == []
    assert d.flight_recorder is not None and d.flight_recorder.kind == "missing-dump" and not d.flight_recorder.decided
    assert any("too few to tell" in note for note in d.notes)


def test_missing_dumps_name_the_ranks_that_left_none(tmp_path: Path) -> None:
    d = diagnose([copy_case("missing_dump", tmp_path / "case")]).diagnosis
    expected = json.loads((FIXTURES / "missing_dump" / "expected.json").read_text())["initiating_ranks"]
    assert d.initiating_ranks == expected and d.flight_recorder is not None and d.flight_recorder.kind == "missing-dump"
