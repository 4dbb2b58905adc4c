"""Split a run's inputs into text logs (for the reader) and Flight Recorder dumps (for ``read_dumps``).

A dump, or an archive (``.tar``, ``.tar.gz``, ``.zip``) of a run folder, is told by its first bytes, whatever
its name, for files and uploads alike. An archive is read in memory under ``ReadLimits`` (links, devices and
``..`` refused) and its members are split the same way: dumps to the Flight Recorder path, text logs to the
reader as in-memory sources, anything else skipped.
"""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import PurePosixPath

from diagnose.errors import InputError
from diagnose.parse.fr_archive import read_tar, read_zip
from diagnose.parse.fr_model import DEFAULT_LIMITS, ReadLimits
from diagnose.parse.fr_unpickle import HEAD_BYTES, head_kind, is_dump, looks_like_pickle
from diagnose.parse.ingest import Source, shown_name

__all__ = ["split_sources"]

_BINARY_SUFFIXES = {".pt", ".pth", ".bin", ".safetensors", ".npy", ".npz", ".png", ".jpg", ".whl", ".so", ".tar", ".zip"}


def _kind(source: Source) -> str:
    """The source's kind: as ``resolve_sources`` marked it, else from its first bytes (uploads, hand-made sources)."""
    if source.kind != "log":
        return source.kind
    if source.data is not None:
        return head_kind(source.data[:HEAD_BYTES]) or "log"
    if source.path is not None:
        try:
            with source.path.open("rb") as fh:
                return head_kind(fh.read(HEAD_BYTES)) or "log"
        except OSError:
            return "log"  # the reader reports it
    return "log"  # standard input is read once, by the reader


def _bytes(source: Source, limit: int) -> bytes:
    if source.data is not None:
        data = source.data
    else:
        assert source.path is not None
        try:
            if source.path.stat().st_size > limit:
                raise InputError(f"{shown_name(source.name)}: over the {limit}-byte cap for one Flight Recorder input")
            data = source.path.read_bytes()
        except OSError as exc:
            raise InputError(f"{shown_name(source.name)}: cannot open: {exc.strerror or exc}") from exc
    if len(data) > limit:
        raise InputError(f"{shown_name(source.name)}: over the {limit}-byte cap for one Flight Recorder input")
    return data


def _is_json_dump(data: bytes) -> bool:
    """A JSON head with a dump's keys is confirmed by decoding (a pickle is kept: a hostile one must be refused, not read as text)."""
    return looks_like_pickle(data) or is_dump(data)


def split_sources(sources: Iterable[Source], limits: ReadLimits = DEFAULT_LIMITS) -> tuple[list[Source], list[tuple[str, bytes]]]:
    """(text log sources, ``(name, bytes)`` of dump files) from a run's inputs, archives unpacked in memory.

    Raises InputError when an archive is over the caps or holds links, devices or ``..`` paths.
    """
    logs: list[Source] = []
    dumps: list[tuple[str, bytes]] = []
    for source in sources:
        kind = _kind(source)
        if kind == "log":
            logs.append(source)
            continue
        data = _bytes(source, limits.max_total_bytes if kind == "archive" else limits.max_file_bytes)
        if kind == "dump":
            if _is_json_dump(data):
                dumps.append((source.name, data))
            else:
                logs.append(source)
            continue
        members = read_zip(data, limits, shown_name) if data[:2] == b"PK" else read_tar(data, limits, shown_name)
        for name, body in members:
            inner = head_kind(body[:HEAD_BYTES])
            if inner == "dump" and _is_json_dump(body):
                dumps.append((name, body))
            elif inner is None and PurePosixPath(name).suffix not in _BINARY_SUFFIXES and not PurePosixPath(name).name.startswith("."):
                logs.append(Source(name, None, data=body))
    return logs, dumps
