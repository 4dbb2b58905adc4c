"""Log input: files, directories of per-rank logs, gzip (by its magic bytes), stdin; read as bounded chunks of whole lines.

Nothing here looks at what the text says: the chunks go straight to the redactor. Names that reach an
error message are masked first (a path can carry a token or a user name).
"""

from __future__ import annotations

import codecs
import gzip
import io
import re
import sys
import zlib
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import IO, cast

from diagnose.errors import InputError
from diagnose.parse.fr_unpickle import HEAD_BYTES, head_kind

CHUNK_BYTES = 1 << 20
MAX_LINE_CHARS = 64 * 1024
MAX_PENDING_CHUNKS = 4
"""A line with no newline is held up to this many chunks, then cut at a separator (never inside a token if it can help it)."""
CUT_SEARCH_BYTES = 64 * 1024
GZIP_MAGIC = b"\x1f\x8b"
_UTF16_BOMS = (b"\xff\xfe", b"\xfe\xff")
_UNPACKING_ERRORS = (gzip.BadGzipFile, EOFError, zlib.error)
"""What unpacking a corrupt or truncated gzip stream raises (BadGzipFile is an OSError, told apart from opening's)."""
_CORRUPT = "cannot read (corrupt or truncated compressed data?)"
_SEPARATORS = (b" ", b"\t", b",", b";", b"&", b"'", b'"')
_SNIFF_BYTES = 8192
_NUL_RUN = re.compile(rb"\x00{64,}")
_STRAY_NUL_SHARE = 0.01
"""NULs a text log may hold outside a hole: a signal handler's C string terminators, a few per crash."""
_ANSI = re.compile(r"\x1b\[[0-9;?]*[A-Za-z]|\x1b\][^\x07]*\x07")
_SKIP_SUFFIXES = {".pt", ".pth", ".bin", ".safetensors", ".npy", ".npz", ".png", ".jpg", ".zip", ".tar", ".whl"}


@dataclass(frozen=True)
class Source:
    """One input stream: a file path, bytes in memory (an upload), or standard input (neither)."""

    name: str
    path: Path | None
    data: bytes | None = None
    kind: str = "log"
    """``log`` (text, for the reader), ``dump`` (a Flight Recorder dump) or ``archive`` (a tar/zip of a run): told by
    content in ``resolve_sources``; the pipeline hands dumps and archives to ``diagnose.parse.fr_sources``, never to the reader."""

    def open(self) -> IO[bytes]:
        """Open the stream for binary reading; gzip data (recognised by its magic bytes, whatever the name) is unpacked,
        and UTF-16 text (recognised by its byte-order mark, inside gzip too) is read as UTF-8."""
        raw: io.BufferedReader
        if self.data is not None:
            raw = io.BufferedReader(cast(io.RawIOBase, io.BytesIO(self.data)))
        elif self.path is None:
            raw = cast(io.BufferedReader, sys.stdin.buffer)
        else:
            raw = self.path.open("rb")
        stream: io.BufferedReader | gzip.GzipFile = raw
        if raw.peek(2)[:2] == GZIP_MAGIC:
            stream = gzip.GzipFile(fileobj=raw, mode="rb")
        if stream.peek(2)[:2] in _UTF16_BOMS:  # unpacking a corrupt gzip stream raises here already
            return cast(IO[bytes], _Utf16AsUtf8(cast(IO[bytes], stream)))
        return cast(IO[bytes], stream)


class _Utf16AsUtf8(io.RawIOBase):
    """A UTF-16 log read as UTF-8 bytes: Windows PowerShell 5's ``>`` writes UTF-16LE with a byte-order mark."""

    def __init__(self, raw: IO[bytes]) -> None:
        super().__init__()
        self._raw = raw
        self._decoder = codecs.getincrementaldecoder("utf-16")(errors="replace")
        self._pending = b""

    def readable(self) -> bool:
        """It is read, never written."""
        return True

    def read(self, size: int = -1) -> bytes:
        """Up to ``size`` bytes of UTF-8 (all that is left with ``size < 0``)."""
        while size < 0 or len(self._pending) < size:
            block = self._raw.read(size if size > 0 else CHUNK_BYTES)
            self._pending += self._decoder.decode(block, final=not block).encode("utf-8")
            if not block:
                break
        cut = len(self._pending) if size < 0 else size
        out, self._pending = self._pending[:cut], self._pending[cut:]
        return out

    def close(self) -> None:
        """Close the file underneath too."""
        self._raw.close()
        super().close()


@dataclass
class Chunk:
    """Whole lines of one source: ``text`` holds lines ``first_line``.. joined by newlines."""

    source: Source
    first_line: int
    text: str
    replaced_bytes: int = 0
    line_total: int = 1


def _is_log_file(path: Path) -> bool:
    return path.is_file() and not path.name.startswith(".") and path.suffix not in _SKIP_SUFFIXES


def _kind(path: Path) -> str:
    """Flight Recorder input (issue 15): a dump or an archive is not a text log; told by its first bytes, not its name."""
    try:
        with path.open("rb") as fh:
            return head_kind(fh.read(HEAD_BYTES)) or "log"
    except OSError:
        return "log"  # the reader reports it


def shown_name(raw: str) -> str:
    """A path as an error message may show it: secrets and identifying names masked."""
    from redaction import Redactor

    return Redactor().redact_line(raw)


def resolve_sources(paths: list[str]) -> list[Source]:
    """Turn CLI arguments into sources; a directory yields its files (recursively, sorted)."""
    if not paths:
        raise InputError("no log given: pass a file, a directory of per-rank logs, or - for stdin")
    sources: list[Source] = []
    for raw in paths:
        if raw == "-":
            sources.append(Source("<stdin>", None))
            continue
        path = Path(raw)
        if path.is_dir():
            files = sorted(p for p in path.rglob("*") if _is_log_file(p))
            if not files:
                raise InputError(f"{shown_name(raw)}: directory holds no log files")
            # dumps beside the logs are marked (kind), not read as text: the pipeline hands them to the Flight Recorder path
            sources.extend(Source(str(p.relative_to(path)), p, kind=_kind(p)) for p in files)
        elif path.is_file():
            sources.append(Source(path.name, path, kind=_kind(path)))
        elif path.exists():
            raise InputError(f"{shown_name(raw)}: not a regular file")
        else:
            raise InputError(f"{shown_name(raw)}: no such file or directory")
    return sources


def _looks_binary(sample: bytes) -> bool:
    """Binary, not a text log: NUL bytes beyond a stray few, or many bytes that are no text. A run of NULs is a hole
    (a log truncated while a process kept writing at its old offset), and a C string's terminator a stray NUL: a text
    log may hold both."""
    body = _NUL_RUN.sub(b"", sample)
    if not body:
        return False
    if body.count(b"\x00") > len(body) * _STRAY_NUL_SHARE:
        return True
    text = body.decode("utf-8", errors="replace")
    bad = text.count("\ufffd") + sum(1 for ch in text if ord(ch) < 32 and ch not in "\t\n\r\x1b\x0c\x08")
    return bad > len(text) * 0.1


def cut_long_lines(lines: list[str]) -> list[str]:
    """Lines longer than MAX_LINE_CHARS cut, with a marker (in place; cheap when none is)."""
    if lines and max(map(len, lines)) > MAX_LINE_CHARS:
        for i, line in enumerate(lines):
            if len(line) > MAX_LINE_CHARS:
                lines[i] = line[:MAX_LINE_CHARS] + " [... line cut by diagnose]"
    return lines


def as_displayed(text: str) -> str:
    """The text as a terminal shows it: ANSI colour codes and NUL bytes dropped, ``\\r\\n`` as ``\\n``, a bare ``\\r``
    (progress bars) keeping the last update."""
    if "\x1b" in text:
        text = _ANSI.sub("", text)
    if "\x00" in text:
        text = text.replace("\x00", "")
    if "\r" not in text:
        return text
    text = text.replace("\r\n", "\n")
    return "\n".join(_last_update(line) if "\r" in line else line for line in text.split("\n"))


def _last_update(line: str) -> str:
    parts = [part for part in line.split("\r") if part.strip()]
    return parts[-1] if parts else ""


def read_chunks(source: Source, chunk_bytes: int = CHUNK_BYTES) -> Iterator[Chunk]:
    """Yield the source as chunks of whole decoded lines (a line longer than a chunk is cut)."""
    try:
        stream = source.open()
    except _UNPACKING_ERRORS as exc:
        raise InputError(f"{shown_name(source.name)}: {_CORRUPT}: {exc}") from exc
    except OSError as exc:
        raise InputError(f"{shown_name(source.name)}: cannot open: {exc.strerror or exc}") from exc
    line_no = 1
    pending = b""
    first = True
    try:
        while True:
            try:
                block = stream.read(chunk_bytes)
            except (OSError, *_UNPACKING_ERRORS) as exc:
                raise InputError(f"{shown_name(source.name)}: {_CORRUPT}: {exc}") from exc
            if first:
                if _looks_binary(block[:_SNIFF_BYTES]):
                    raise InputError(f"{shown_name(source.name)}: looks like a binary file, not a text log")
                first = False
            if not block:
                if pending:
                    yield _decode(source, line_no, pending)
                return
            data = pending + block
            cut = data.rfind(b"\n")
            if cut < 0:
                if len(data) < chunk_bytes * MAX_PENDING_CHUNKS:
                    pending = data
                    continue
                cut = _separator_cut(data)
            body, pending = data[: cut + 1], data[cut + 1 :]
            chunk = _decode(source, line_no, body[:-1] if body.endswith(b"\n") else body)
            line_no += chunk.line_total
            yield chunk
    finally:
        if source.path is not None or source.data is not None:
            stream.close()


def _separator_cut(data: bytes) -> int:
    """Where to cut a line too long to hold: at the last separator near the end, so a token is not split in two halves."""
    floor = max(0, len(data) - CUT_SEARCH_BYTES)
    best = max(data.rfind(sep, floor) for sep in _SEPARATORS)
    return best if best > 0 else len(data) - 1


def _decode(source: Source, line_no: int, data: bytes) -> Chunk:
    text = data.decode("utf-8", errors="replace")
    replaced = text.count("\ufffd") if "\ufffd" in text else 0
    text = as_displayed(text)
    return Chunk(source, line_no, text, replaced, text.count("\n") + 1)
