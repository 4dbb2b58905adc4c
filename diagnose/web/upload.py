"""Read a log from a request without touching the disk: a raw ``text/plain`` body or multipart field(s) ``file``.

The body is streamed and counted: past the size limit the request ends with 413 before the
rest is read. Multipart is parsed in memory (Starlette's form parser would spool large files
to a temporary file, and raw logs never go to disk), with at most ``MAX_PARTS`` parts and
``MAX_FILES`` files, and it must end with its closing boundary.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from python_multipart.exceptions import MultipartParseError
from python_multipart.multipart import MultipartParser, MultipartState, parse_options_header
from starlette.requests import Request

from diagnose.errors import InputError
from diagnose.parse.ingest import Source
from diagnose.web.guard import FORM_OVERHEAD, upload_too_large

UPLOAD_NAME = "upload.log"
_FORM_OVERHEAD = FORM_OVERHEAD
MAX_FILES = 256
"""Files per upload: a run's per-rank or per-node logs (each new file name also costs the masker some work)."""
MAX_PARTS = MAX_FILES + 8
_MAX_FIELD_BYTES = 1024
_MODEL_RE = re.compile(r"^[A-Za-z0-9._:/@+-]{1,200}$")
_UNSAFE_NAME = re.compile(r"[^A-Za-z0-9._-]+")


class UploadTooLarge(InputError):
    """The body is over the configured size limit."""

    status = 413


class TooManyParts(InputError):
    """The form has more parts or files than one upload may."""

    status = 413


class UnsupportedMediaType(InputError):
    """The body is neither text nor a multipart form."""

    status = 415


@dataclass
class Upload:
    """The log sources of a request and the model it asked for (None: the server's default)."""

    sources: list[Source]
    model: str | None = None


def _too_large(limit: int) -> UploadTooLarge:
    return UploadTooLarge(upload_too_large(limit))


def safe_name(filename: str | None) -> str:
    """A file name fit to show as the evidence's ``file``: base name, plain characters, at most 100."""
    base = (filename or "").replace("\\", "/").rsplit("/", 1)[-1]
    cleaned = _UNSAFE_NAME.sub("_", base).strip("._")[:100]
    return cleaned or UPLOAD_NAME


def check_model(model: str | None) -> str | None:
    """The model string when it is a plausible litellm model name; InputError otherwise."""
    if model is None or model == "":
        return None
    if not _MODEL_RE.match(model):
        raise InputError("model must be a litellm model string such as openai/gpt-4o-mini")
    return model


@dataclass
class _Part:
    name: str
    filename: str | None
    data: bytearray = field(default_factory=bytearray)


class _FormCollector:
    """Callbacks for python-multipart's streaming parser that keep parts in memory, within a limit."""

    def __init__(self, limit: int) -> None:
        self.limit = limit
        self.parts: list[_Part] = []
        self._size = 0
        self._header_name = bytearray()
        self._header_value = bytearray()
        self._headers: dict[str, str] = {}

    def callbacks(self) -> dict[str, object]:
        """The callback table MultipartParser expects."""
        return {
            "on_part_begin": self._part_begin,
            "on_header_field": lambda data, start, end: self._header_name.extend(data[start:end]),
            "on_header_value": lambda data, start, end: self._header_value.extend(data[start:end]),
            "on_header_end": self._header_end,
            "on_headers_finished": self._headers_finished,
            "on_part_data": self._part_data,
        }

    def _part_begin(self) -> None:
        self._headers = {}

    def _header_end(self) -> None:
        self._headers[self._header_name.decode("latin-1").lower()] = self._header_value.decode("latin-1")
        self._header_name.clear()
        self._header_value.clear()

    def _headers_finished(self) -> None:
        _, options = parse_options_header(self._headers.get("content-disposition", ""))
        name = options.get(b"name", b"").decode("utf-8", "replace")
        filename = options[b"filename"].decode("utf-8", "replace") if b"filename" in options else None
        if len(self.parts) >= MAX_PARTS or (name == "file" and sum(p.name == "file" for p in self.parts) >= MAX_FILES):
            raise TooManyParts(
                f"the form has more than {MAX_FILES} files or {MAX_PARTS} parts; put the logs in fewer files (or a .tar.gz the CLI reads)"
            )
        self.parts.append(_Part(name, filename))

    def _part_data(self, data: bytes, start: int, end: int) -> None:
        part = self.parts[-1]
        if part.name != "file" and len(part.data) + end - start > _MAX_FIELD_BYTES:
            raise InputError(f"form field {part.name[:40]!r} is too long")
        self._size += end - start
        if self._size > self.limit:
            raise _too_large(self.limit)
        part.data.extend(data[start:end])


async def _read_text_body(request: Request, limit: int) -> bytes:
    body = bytearray()
    async for piece in request.stream():
        body.extend(piece)
        if len(body) > limit:
            raise _too_large(limit)
    return bytes(body)


async def _read_form(request: Request, boundary: bytes, limit: int) -> list[_Part]:
    collector = _FormCollector(limit)
    try:
        parser = MultipartParser(boundary, collector.callbacks(), max_size=limit + _FORM_OVERHEAD)  # type: ignore[arg-type]
        async for piece in request.stream():
            parser.write(piece)
        parser.finalize()
    except MultipartParseError as exc:
        raise InputError("malformed multipart body") from exc
    except ValueError as exc:
        raise InputError("malformed multipart body: bad boundary") from exc
    if parser.state != MultipartState.END:
        raise InputError("malformed multipart body: it ends before its closing boundary (cut off?)")
    return collector.parts


async def read_upload(request: Request, limit: int, model: str | None = None) -> Upload:
    """The log(s) in the request: a text body, or every multipart field named ``file``; plus ``model``."""
    declared = request.headers.get("content-length", "")
    if declared.isdigit() and int(declared) > limit + _FORM_OVERHEAD:
        raise _too_large(limit)
    content_type, options = parse_options_header(request.headers.get("content-type", ""))
    if content_type.startswith(b"text/"):
        data = await _read_text_body(request, limit)
        upload = Upload([Source(UPLOAD_NAME, None, data=data)], model)
    elif content_type == b"multipart/form-data":
        if b"boundary" not in options:
            raise InputError("multipart body without a boundary")
        parts = await _read_form(request, options[b"boundary"], limit)
        files = [p for p in parts if p.name == "file"]
        if not files:
            misnamed = next((p.name for p in parts if p.filename is not None), None)
            if misnamed is not None:
                raise InputError(f"the form sends a file as field {misnamed[:40]!r}: send it as the `file` field")
            raise InputError("the form has no `file` field")
        names = _unique([safe_name(p.filename) for p in files])
        form_model = next((p.data.decode("utf-8", "replace").strip() for p in parts if p.name == "model"), None)
        upload = Upload([Source(n, None, data=bytes(p.data)) for n, p in zip(names, files, strict=True)], form_model or model)
    else:
        raise UnsupportedMediaType("send the log as a text/plain body or as multipart/form-data with a `file` field")
    if not any(source.data and source.data.strip() for source in upload.sources):
        raise InputError("the log is empty")
    upload.model = check_model(upload.model)
    return upload


def _unique(names: list[str]) -> list[str]:
    seen: dict[str, int] = {}
    out = []
    for name in names:
        seen[name] = seen.get(name, 0) + 1
        out.append(name if seen[name] == 1 else f"{seen[name]}-{name}")
    return out
