"""Files out of a folder or an archive (``.tar``, ``.tar.gz``, ``.zip``), in memory and bounded.

Archives are refused on links, devices, ``..`` or absolute member names, encryption, and sizes or
member counts past ``ReadLimits``. A folder is walked three levels deep, links skipped, and only files
that start like a dump are read.
"""

from __future__ import annotations

import io
import re
import stat
import tarfile
import zipfile
from collections.abc import Callable, Iterator
from pathlib import Path

from diagnose.errors import InputError
from diagnose.parse.fr_model import ReadLimits
from diagnose.parse.fr_unpickle import looks_like_json, looks_like_pickle

__all__ = ["archive_kind", "read_dir", "read_tar", "read_zip"]


def _budget(limits: ReadLimits, show: Callable[[str], str]) -> Callable[[str, int], None]:
    """A checker that raises once the files read so far exceed the caps."""
    seen = {"bytes": 0, "files": 0}

    def take(name: str, size: int) -> None:
        seen["bytes"] += size
        seen["files"] += 1
        if size > limits.max_file_bytes:
            raise InputError(f"{show(name)}: {size} bytes is over the {limits.max_file_bytes}-byte cap for one file")
        if seen["bytes"] > limits.max_total_bytes or seen["files"] > limits.max_members:
            raise InputError(f"input is over the caps ({limits.max_total_bytes} bytes, {limits.max_members} files) for one input")

    return take


def _safe_member_name(name: str) -> bool:
    parts = name.replace("\\", "/").split("/")
    return not name.startswith(("/", "\\")) and ".." not in parts and not re.match(r"^[A-Za-z]:", name)


def read_tar(data: bytes, limits: ReadLimits, show: Callable[[str], str]) -> list[tuple[str, bytes]]:
    """The regular files of a tar (optionally compressed), read in memory; InputError on links, devices, ``..``, caps."""
    take = _budget(limits, show)
    out: list[tuple[str, bytes]] = []
    try:
        with tarfile.open(fileobj=io.BytesIO(data), mode="r:*") as tar:
            while (member := tar.next()) is not None:
                if not _safe_member_name(member.name):
                    raise InputError(f"archive member {show(member.name)!r} points outside the archive; refused")
                if member.isdir():
                    continue
                if not member.isreg():
                    raise InputError(f"archive member {show(member.name)!r} is a link or device; refused")
                take(member.name, member.size)
                handle = tar.extractfile(member)
                if handle is not None:
                    out.append((member.name, handle.read(limits.max_file_bytes + 1)))
    except (tarfile.TarError, EOFError, OSError) as exc:
        raise InputError(f"cannot read the archive: {exc}") from None
    return out


def read_zip(data: bytes, limits: ReadLimits, show: Callable[[str], str]) -> list[tuple[str, bytes]]:
    """The regular files of a zip, read in memory; InputError on links, devices, ``..``, encryption, caps."""
    take = _budget(limits, show)
    out: list[tuple[str, bytes]] = []
    try:
        with zipfile.ZipFile(io.BytesIO(data)) as zf:
            infos = zf.infolist()
            if len(infos) > limits.max_members:
                raise InputError(f"archive has {len(infos)} members, over the cap of {limits.max_members}")
            for info in infos:
                mode = info.external_attr >> 16
                if not _safe_member_name(info.filename):
                    raise InputError(f"archive member {show(info.filename)!r} points outside the archive; refused")
                if info.is_dir():
                    continue
                if stat.S_IFMT(mode) and not stat.S_ISREG(mode):
                    raise InputError(f"archive member {show(info.filename)!r} is a link or device; refused")
                if info.flag_bits & 0x1:
                    raise InputError(f"archive member {show(info.filename)!r} is encrypted; refused")
                take(info.filename, info.file_size)
                with zf.open(info) as handle:
                    body = handle.read(limits.max_file_bytes + 1)
                if len(body) > info.file_size:
                    raise InputError(f"archive member {show(info.filename)!r} is larger than its header says; refused")
                out.append((info.filename, body))
    except (zipfile.BadZipFile, EOFError, OSError, NotImplementedError) as exc:
        raise InputError(f"cannot read the archive: {exc}") from None
    return out


def archive_kind(data: bytes) -> str | None:
    """``"tar"`` (plain or gzip), ``"zip"``, or None, by the magic bytes."""
    if data[:2] == b"\x1f\x8b" or data[257:262] == b"ustar":
        return "tar"
    if data[:4] == b"PK\x03\x04" or data[:4] == b"PK\x05\x06":
        return "zip"
    return None


def read_dir(root: Path, limits: ReadLimits, show: Callable[[str], str]) -> Iterator[tuple[str, bytes]]:
    """The files of a folder (three levels deep, links skipped) that start like a dump, one at a time."""
    take = _budget(limits, show)
    pending = [(root, 0)]
    while pending:
        folder, depth = pending.pop()
        for child in sorted(folder.iterdir()):
            if child.is_symlink():
                continue
            if child.is_dir() and depth < 3:
                pending.append((child, depth + 1))
            elif child.is_file():
                with child.open("rb") as fh:
                    head = fh.read(8)
                size = child.stat().st_size
                if not looks_like_pickle(head) and not (looks_like_json(head) and size <= limits.max_file_bytes):
                    continue  # a log beside the dumps (a large JSON-lines log too)
                take(child.name, size)
                yield str(child.relative_to(root)), child.read_bytes()
