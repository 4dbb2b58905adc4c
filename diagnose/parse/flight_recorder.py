"""Read PyTorch Flight Recorder dumps safely: a folder, one file, or a ``.tar.gz``/``.zip`` of a folder.

A dump (``TORCH_FR_DUMP_TEMP_FILE=<prefix>`` writes ``<prefix><rank>``) is a pickled dict, or the JSON form
newer PyTorch and ``fr_trace`` write, with ``version``, ``pg_config``, ``pg_status`` and ``entries``.

>>> from redaction import Redactor
>>> dumps = load_dumps("run/fr_dumps", Redactor())        # doctest: +SKIP
>>> dumps[0].rank, dumps[0].entries[0].op                # doctest: +SKIP
(0, 'all_reduce')

Safety: pickles go through an unpickler whose ``find_class`` refuses every class, so nothing is imported
or called; archives are read in memory under size and member caps and refused on links, devices or
``..``; every string of a dump (keys included) is masked by the caller's ``Redactor`` before the typed
``RankDump`` is built, so nothing downstream sees a raw home path, host name or token.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from diagnose.errors import InputError
from diagnose.parse.fr_archive import archive_kind, read_dir, read_tar, read_zip
from diagnose.parse.fr_masker import Masker
from diagnose.parse.fr_model import DEFAULT_LIMITS, Frame, FREntry, PGInfo, PGStatus, RankDump, ReadLimits
from diagnose.parse.fr_unpickle import NotADump, decode_dump, is_dump, looks_like_json, looks_like_pickle
from redaction import Redactor

__all__ = ["FREntry", "Frame", "PGInfo", "PGStatus", "RankDump", "ReadLimits", "is_dump", "load_dumps", "read_dump", "read_dumps"]


def _int(value: Any) -> int | None:
    if type(value) is int:
        return value
    if isinstance(value, bool):
        return int(value)
    if isinstance(value, str) and re.fullmatch(r"-?\d+", value.strip()):
        return int(value)
    return None


def _ranks(value: Any, m: Masker) -> tuple[int, ...]:
    if isinstance(value, str):
        try:
            value = json.loads(m.text(value))
        except ValueError:
            return ()
    if isinstance(value, list | tuple):
        return tuple(r for r in map(_int, value) if r is not None)
    return ()


def _sizes(value: Any) -> tuple[tuple[int, ...], ...]:
    if not isinstance(value, list | tuple):
        return ()
    out: list[tuple[int, ...]] = []
    for s in value:
        if isinstance(s, list | tuple):
            dims = tuple(s)
            out.append(dims if all(type(d) is int for d in dims) else tuple(d for d in map(_int, dims) if d is not None))
        else:
            out.append(())
    return tuple(out)


def _strs(value: Any, m: Masker) -> tuple[str, ...]:
    return tuple(m.text(v) for v in value) if isinstance(value, list | tuple) else ()


_P2P_NAME = re.compile(r"^(?:\w+:)?(send|recv)\s+(\d+)\s*(->|<-)\s*(\d+)")


def _entry(raw: Any, m: Masker) -> FREntry | None:
    if not isinstance(raw, dict):
        return None
    profiling = m.text(raw.get("profiling_name") or "")
    pg = raw.get("process_group")
    pg_name, pg_desc = (
        (m.text(pg[0]), m.text(pg[1])) if isinstance(pg, list | tuple) and len(pg) >= 2 else (m.text(raw.get("pg_id", "")), "")
    )
    p2p = _P2P_NAME.match(profiling)
    peers: tuple[int, int] | None = None
    if p2p:
        a, b = int(p2p.group(2)), int(p2p.group(4))
        peers = (a, b) if p2p.group(3) == "->" else (b, a)
    op = p2p.group(1) if p2p else profiling.split(":", 1)[-1].strip()
    frames = tuple(
        Frame(m.text(f.get("name", "")), m.text(f.get("filename", "")), _int(f.get("line")))
        for f in (raw.get("frames") or [])
        if isinstance(f, dict)
    )
    is_p2p = raw.get("is_p2p")
    return FREntry(
        record_id=_int(raw.get("record_id")) or 0,
        pg_id=_int(raw.get("pg_id")),
        pg_name=pg_name,
        pg_desc=pg_desc,
        collective_seq_id=_int(raw.get("collective_seq_id")) or 0,
        p2p_seq_id=_int(raw.get("p2p_seq_id")) or 0,
        op_id=_int(raw.get("op_id")),
        profiling_name=profiling,
        op=op,
        peers=peers,
        is_p2p=is_p2p if isinstance(is_p2p, bool) else p2p is not None,
        state=m.text(raw.get("state") or "scheduled"),
        time_created_ns=_int(raw.get("time_created_ns")),
        input_sizes=_sizes(raw.get("input_sizes")),
        input_dtypes=_strs(raw.get("input_dtypes"), m),
        output_sizes=_sizes(raw.get("output_sizes")),
        output_dtypes=_strs(raw.get("output_dtypes"), m),
        timeout_ms=_int(raw.get("timeout_ms")),
        frames=frames,
    )


def _pg_config(raw: Any, m: Masker) -> dict[str, PGInfo]:
    out: dict[str, PGInfo] = {}
    if isinstance(raw, dict):
        for key, cfg in raw.items():
            if isinstance(cfg, dict):
                name = m.text(cfg.get("name", key))
                out[name] = PGInfo(name, m.text(cfg.get("desc", "")), _ranks(cfg.get("ranks"), m))
    return out


def _pg_status(raw: Any, m: Masker) -> dict[str, PGStatus]:
    out: dict[str, PGStatus] = {}
    if isinstance(raw, dict):
        for key, st in raw.items():
            if isinstance(st, dict):
                vals = [_int(st.get(f"last_{k}_collective")) for k in ("enqueued", "started", "completed")]
                out[m.text(key)] = PGStatus(*[v if v is not None and v >= 0 else None for v in vals])
    return out


_RANK_SUFFIX = re.compile(r"(\d+)(?:\.(?:json|pkl|pickle))?$")


def read_dump(data: bytes, name: str, redactor: Redactor, *, rank: int | None = None, limits: ReadLimits = DEFAULT_LIMITS) -> RankDump:
    """Read one dump from bytes. ``name`` is its file name (the rank is its trailing number unless ``rank`` is given).

    Raises InputError when ``data`` is not a dump, is hostile, or its rank cannot be told.
    """
    return _read(data, name, Masker(redactor, limits), rank)


def _read(data: bytes, name: str, m: Masker, rank: int | None = None) -> RankDump:
    """``read_dump`` with a masker shared by every dump of one run (each distinct string is masked once)."""
    label = m.text(name.replace("\\", "/").rsplit("/", 1)[-1])
    raw = decode_dump(data, label)
    if raw is None:
        raise NotADump(f"{label}: not a Flight Recorder dump (expected a pickled or JSON dict with 'entries' and 'version')")
    m.check(raw, label)
    if rank is None:
        rank = _int(raw.get("rank"))
    if rank is None:
        found = _RANK_SUFFIX.search(name)
        rank = int(found.group(1)) if found else None
    if rank is None:
        raise InputError(f"{label}: cannot tell which rank wrote this dump (name it <prefix><rank>)")
    entries = [e for e in (_entry(r, m) for r in raw.get("entries") or []) if e is not None]
    entries.sort(key=lambda e: e.record_id)
    nccl = raw.get("nccl_version") or raw.get("comm_lib_version")
    return RankDump(
        rank=rank,
        file=label,
        version=m.text(raw.get("version")),
        nccl_version=m.text(nccl) if nccl is not None else None,
        pg_config=_pg_config(raw.get("pg_config"), m),
        pg_status=_pg_status(raw.get("pg_status"), m),
        entries=entries,
    )


def load_dumps(
    source: str | Path | bytes, redactor: Redactor, *, name: str = "dump", limits: ReadLimits = DEFAULT_LIMITS
) -> list[RankDump]:
    """Every rank's dump from a folder, one dump file, an archive file, or the bytes of a dump or an archive.

    Files that are not dumps (logs beside them) are skipped; dumps are told by content, not by name.
    Returns the dumps sorted by rank. Raises InputError when nothing is a dump, a rank appears twice,
    a pickle is hostile, or an archive is over the caps or holds links, devices or ``..`` paths.
    ``name`` names bytes input (its trailing number is the rank of a single dump).
    """
    files: Iterable[tuple[str, bytes]]
    masker = Masker(redactor, limits)
    if isinstance(source, bytes):
        data, label = source, name
    else:
        path = Path(source)
        if path.is_dir():
            data, label = b"", ""
            files = read_dir(path, limits, masker.text)
        elif path.is_file():
            if path.stat().st_size > limits.max_total_bytes:
                raise InputError(f"{masker.text(path.name)}: over the {limits.max_total_bytes}-byte cap")
            data, label = path.read_bytes(), path.name
        else:
            raise InputError(f"{masker.text(path.name)}: no such file or folder")
    if label:
        kind = archive_kind(data)
        if kind == "tar":
            files = read_tar(data, limits, masker.text)
        elif kind == "zip":
            files = read_zip(data, limits, masker.text)
        else:
            return [_read(data, label, masker)]
    return _collect(files, masker)


def read_dumps(files: Iterable[tuple[str, bytes]], redactor: Redactor, *, limits: ReadLimits = DEFAULT_LIMITS) -> list[RankDump]:
    """The dumps among ``(name, bytes)`` files (one run's, already out of their folder or archive), sorted by rank.

    One masker serves them all, so each distinct string is masked once and placeholders agree with ``redactor``'s.
    Files that are not dumps are skipped; InputError when none is, a rank appears twice, or a pickle is hostile.
    """
    return _collect(files, Masker(redactor, limits))


def _collect(files: Iterable[tuple[str, bytes]], masker: Masker) -> list[RankDump]:
    dumps: dict[int, RankDump] = {}
    for member, body in files:
        if not (looks_like_pickle(body) or looks_like_json(body)):
            continue
        try:
            dump = _read(body, member, masker)
        except NotADump:
            continue
        if dump.rank in dumps:
            raise InputError(f"two dumps claim rank {dump.rank}: {dumps[dump.rank].file} and {dump.file}")
        dumps[dump.rank] = dump
    if not dumps:
        raise InputError("no Flight Recorder dump found (expected files <prefix><rank> holding pickled or JSON dumps)")
    return [dumps[r] for r in sorted(dumps)]
