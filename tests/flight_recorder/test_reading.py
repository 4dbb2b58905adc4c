"""Reading Flight Recorder dumps: detection by content, safe unpickling, archives under caps, JSON form."""

from __future__ import annotations

import builtins
import io
import json
import os
import pickle
import tarfile
import zipfile
from collections.abc import Callable
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest

from diagnose.errors import InputError
from diagnose.parse.flight_recorder import ReadLimits, is_dump, load_dumps, read_dump
from redaction import Redactor

from .conftest import FIXTURES


class _Hostile:
    """Pickles to ``func(arg)``: what a malicious upload would carry."""

    def __init__(self, func: Callable[..., Any], arg: str) -> None:
        self.func, self.arg = func, arg

    def __reduce__(self) -> tuple[Callable[..., Any], tuple[str]]:
        return (self.func, (self.arg,))


def _hostile_payloads(marker: Path) -> list[bytes]:
    """Pickles that would create ``marker`` via os.system, posix.system (same function) and builtins.eval."""
    shell = _Hostile(os.system, f"touch {marker}")
    evil = _Hostile(builtins.eval, f"open({str(marker)!r}, 'w').close()")
    return [
        pickle.dumps(shell, protocol=2),
        pickle.dumps({"version": "2.9", "entries": [shell]}, protocol=4),
        pickle.dumps({"version": "2.9", "pg_config": {}, "entries": [evil]}, protocol=2),
    ]


def _tar(files: dict[str, bytes], extra: Callable[[tarfile.TarFile], None] | None = None) -> bytes:
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w:gz") as tar:
        for name, body in files.items():
            info = tarfile.TarInfo(name)
            info.size = len(body)
            tar.addfile(info, io.BytesIO(body))
        if extra:
            extra(tar)
    return buf.getvalue()


def _zip(files: dict[str, bytes]) -> bytes:
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w") as zf:
        for name, body in files.items():
            zf.writestr(name, body)
    return buf.getvalue()


def _case_files(case: str) -> dict[str, bytes]:
    return {f"run/{p.name}": p.read_bytes() for p in sorted((FIXTURES / case).iterdir())}


def test_fixtures_on_disk_are_what_the_generator_builds(generator: ModuleType) -> None:
    for case, files in generator.build().items():
        for name, body in files.items():
            assert (FIXTURES / case / name).read_bytes() == body, f"re-run generate.py: {case}/{name} is stale"


@pytest.mark.parametrize(
    ("data", "expected"),
    [
        (pickle.dumps({"version": "2.9", "entries": []}, protocol=2), True),
        (json.dumps({"version": "2.9", "entries": []}).encode(), True),
        (b'  {"version": "2.10", "entries": [], "pg_config": {}}', True),
        (pickle.dumps([1, 2, 3], protocol=2), False),
        (pickle.dumps({"entries": []}, protocol=2), False),
        (b"[rank0]:[E1218 20:27:21 ProcessGroupNCCL.cpp:629] Watchdog caught collective operation timeout", False),
        (b'{"level": "info"}\n{"level": "warn"}\n', False),
        (b"\x80\x02garbage", False),
        (b"", False),
    ],
)
def test_is_dump_by_content(data: bytes, expected: bool) -> None:
    assert is_dump(data) is expected


def test_is_dump_on_a_real_dump(fr_shared: Path) -> None:
    assert is_dump((fr_shared / "gpu_error_2nd" / "_dump_9").read_bytes())


@pytest.mark.parametrize("index", [0, 1, 2])
def test_hostile_pickle_is_refused_and_nothing_runs(tmp_path: Path, redactor: Redactor, index: int) -> None:
    marker = tmp_path / "pwned"
    data = _hostile_payloads(marker)[index]
    with pytest.raises(InputError, match="refused") as err:
        load_dumps(data, redactor, name="_dump_0")
    assert "\n" not in str(err.value)
    assert not is_dump(data)
    assert not marker.exists()


def test_hostile_pickle_in_a_folder_or_archive_is_refused(tmp_path: Path, redactor: Redactor) -> None:
    marker = tmp_path / "pwned"
    payload = _hostile_payloads(marker)[1]
    folder = tmp_path / "dumps"
    folder.mkdir()
    (folder / "_dump_0").write_bytes(pickle.dumps({"version": "2.9", "entries": []}, protocol=2))
    (folder / "_dump_1").write_bytes(payload)
    with pytest.raises(InputError, match="refused"):
        load_dumps(folder, redactor)
    with pytest.raises(InputError, match="refused"):
        load_dumps(_tar({"_dump_1": payload}), redactor)
    assert not marker.exists()


def test_folder_with_logs_beside_the_dumps(tmp_path: Path, redactor: Redactor) -> None:
    for p in (FIXTURES / "mismatch_op").glob("_dump_*"):
        (tmp_path / p.name).write_bytes(p.read_bytes())
    (tmp_path / "train.log").write_text("[rank0]: hello\n")
    (tmp_path / "metrics.jsonl").write_text('{"step": 1}\n{"step": 2}\n')
    (tmp_path / "link_9").symlink_to(tmp_path / "_dump_0")
    dumps = load_dumps(tmp_path, redactor)
    assert [d.rank for d in dumps] == [0, 1, 2, 3]
    assert dumps[2].entries[0].op == "broadcast"


def test_single_file_json_and_pickle(redactor: Redactor) -> None:
    (json_dump,) = load_dumps(FIXTURES / "mismatch_size" / "_dump_1", redactor)
    assert json_dump.rank == 1 and json_dump.entries[0].input_sizes == ((2048,),)
    (pickled,) = load_dumps(FIXTURES / "p2p_hang" / "_dump_0", redactor)
    entry = pickled.entries[0]
    assert (pickled.rank, entry.op, entry.peers, entry.is_p2p, entry.seq_id) == (0, "send", (0, 1), True, 8)
    assert pickled.pg_config["5"].ranks == (0, 1)


@pytest.mark.parametrize("pack", [_tar, _zip])
def test_archives_read_in_memory(pack: Callable[[dict[str, bytes]], bytes], redactor: Redactor, tmp_path: Path) -> None:
    data = pack(_case_files("p2p_hang"))
    assert [d.rank for d in load_dumps(data, redactor)] == [0, 1, 2, 3]
    archive = tmp_path / "dumps.bin"
    archive.write_bytes(data)
    assert len(load_dumps(archive, redactor)) == 4
    assert sorted(p.name for p in tmp_path.iterdir()) == ["dumps.bin"]


def _symlink(tar: tarfile.TarFile) -> None:
    info = tarfile.TarInfo("run/_dump_7")
    info.type, info.linkname = tarfile.SYMTYPE, "/etc/passwd"
    tar.addfile(info)


def _hardlink(tar: tarfile.TarFile) -> None:
    info = tarfile.TarInfo("run/_dump_7")
    info.type, info.linkname = tarfile.LNKTYPE, "run/_dump_0"
    tar.addfile(info)


def _device(tar: tarfile.TarFile) -> None:
    info = tarfile.TarInfo("run/zero")
    info.type = tarfile.CHRTYPE
    tar.addfile(info)


@pytest.mark.parametrize("extra", [_symlink, _hardlink, _device])
def test_archive_with_links_or_devices_is_refused(extra: Callable[[tarfile.TarFile], None], redactor: Redactor) -> None:
    with pytest.raises(InputError, match="link or device"):
        load_dumps(_tar(_case_files("mismatch_op"), extra), redactor)


@pytest.mark.parametrize("name", ["../_dump_0", "/abs/_dump_0", "run/../../_dump_0"])
@pytest.mark.parametrize("pack", [_tar, _zip])
def test_archive_path_traversal_is_refused(name: str, pack: Callable[[dict[str, bytes]], bytes], redactor: Redactor) -> None:
    with pytest.raises(InputError, match="outside the archive"):
        load_dumps(pack({name: (FIXTURES / "mismatch_op" / "_dump_0").read_bytes()}), redactor)


def test_zip_symlink_is_refused(redactor: Redactor) -> None:
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w") as zf:
        info = zipfile.ZipInfo("_dump_0")
        info.external_attr = (0o120777 << 16) | 0
        zf.writestr(info, "/etc/passwd")
    with pytest.raises(InputError, match="link or device"):
        load_dumps(buf.getvalue(), redactor)


@pytest.mark.parametrize("pack", [_tar, _zip])
def test_archive_caps(pack: Callable[[dict[str, bytes]], bytes], redactor: Redactor) -> None:
    files = _case_files("mismatch_op")
    with pytest.raises(InputError, match="cap"):
        load_dumps(pack(files), redactor, limits=ReadLimits(max_total_bytes=2000))
    with pytest.raises(InputError, match="cap"):
        load_dumps(pack(files), redactor, limits=ReadLimits(max_members=2))
    bomb = {"_dump_0": b"\x80\x02" + b"\x00" * 5_000_000}
    with pytest.raises(InputError, match="cap"):
        load_dumps(pack(bomb), redactor, limits=ReadLimits(max_file_bytes=1_000_000))


def test_exponential_pickle_is_bounded(redactor: Redactor) -> None:
    tree: list[Any] = ["x"]
    for _ in range(40):
        tree = [tree, tree]
    data = pickle.dumps({"version": "2.9", "entries": tree}, protocol=2)
    assert len(data) < 10_000
    with pytest.raises(InputError, match="too large"):
        load_dumps(data, redactor, name="_dump_0")


@pytest.mark.parametrize(
    ("source", "message"),
    [
        (b"just a log line\n", "not a Flight Recorder dump"),
        (pickle.dumps({"version": "2.9", "entries": []}, protocol=2), "cannot tell which rank"),
    ],
)
def test_one_line_input_errors(source: bytes, message: str, redactor: Redactor) -> None:
    with pytest.raises(InputError, match=message) as err:
        load_dumps(source, redactor, name="upload")
    assert "\n" not in str(err.value)


def test_empty_folder_and_duplicate_ranks(tmp_path: Path, redactor: Redactor) -> None:
    with pytest.raises(InputError, match="no Flight Recorder dump"):
        load_dumps(tmp_path, redactor)
    body = (FIXTURES / "mismatch_op" / "_dump_0").read_bytes()
    (tmp_path / "a_dump_0").write_bytes(body)
    (tmp_path / "b_dump_0").write_bytes(body)
    with pytest.raises(InputError, match="two dumps claim rank 0"):
        load_dumps(tmp_path, redactor)


def test_rank_key_and_explicit_rank_win_over_the_name(redactor: Redactor) -> None:
    data = json.dumps({"version": "2.9", "rank": 5, "entries": []}).encode()
    assert read_dump(data, "_dump_1", redactor).rank == 5
    assert read_dump(data, "_dump_1", redactor, rank=7).rank == 7


def test_large_json_lines_log_beside_the_dumps_is_skipped(tmp_path: Path, redactor: Redactor) -> None:
    for p in (FIXTURES / "mismatch_op").glob("_dump_*"):
        (tmp_path / p.name).write_bytes(p.read_bytes())
    (tmp_path / "metrics.jsonl").write_text('{"step": 1, "loss": 2.5}\n' * 2000)
    dumps = load_dumps(tmp_path, redactor, limits=ReadLimits(max_file_bytes=20_000))
    assert [d.rank for d in dumps] == [0, 1, 2, 3]
