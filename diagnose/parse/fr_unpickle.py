"""Tell a Flight Recorder dump by its bytes and decode it without running anything.

A pickle goes through ``NoClassesUnpickler``, whose ``find_class`` refuses every class, so nothing is
imported or called; JSON (newer PyTorch, ``fr_trace``) is parsed as plain data. A dump is a dict with
``entries`` and ``version``.
"""

from __future__ import annotations

import io
import json
import pickle
import zlib
from typing import Any, Literal

from diagnose.errors import InputError

__all__ = ["HEAD_BYTES", "NoClassesUnpickler", "NotADump", "decode_dump", "head_kind", "is_dump", "looks_like_json", "looks_like_pickle"]

HEAD_BYTES = 4096
"""How much of a file ``head_kind`` needs."""
_JSON_DUMP_KEYS = (b'"entries"', b'"pg_config"', b'"pg_status"')


class NotADump(InputError):
    """The bytes are not a Flight Recorder dump (a log beside the dumps, say): skipped when reading a folder."""


class NoClassesUnpickler(pickle.Unpickler):
    """An unpickler that refuses every global: dumps hold only dicts, lists, tuples, strings and numbers."""

    def find_class(self, module: str, name: str, /) -> Any:
        """Refuse: a dump never needs a class or a function, and a hostile one would call ``os.system``."""
        raise pickle.UnpicklingError(f"refused to load {module}.{name}")


def looks_like_pickle(data: bytes) -> bool:
    """True when ``data`` starts like a pickle (protocol 2-5)."""
    return len(data) > 2 and data[0] == 0x80 and 2 <= data[1] <= 5


def looks_like_json(data: bytes) -> bool:
    """True when ``data`` starts like a JSON object."""
    return data.lstrip()[:1] == b"{"


def decode_dump(data: bytes, name: str) -> dict[Any, Any] | None:
    """The raw dict of a dump, or None when ``data`` is not a dump; InputError for a hostile or broken pickle."""
    if looks_like_pickle(data):
        try:
            obj = NoClassesUnpickler(io.BytesIO(data)).load()
        except pickle.UnpicklingError as exc:
            if "refused to load" in str(exc):
                raise InputError(f"{name}: refused a pickle that tries to load code ({exc}); Flight Recorder dumps never do") from None
            return None
        except (EOFError, ValueError, TypeError, IndexError, KeyError, AttributeError, MemoryError, RecursionError):
            return None
    elif looks_like_json(data):
        try:
            obj = json.loads(data)
        except (ValueError, RecursionError):
            return None
    else:
        return None
    if isinstance(obj, dict) and "entries" in obj and "version" in obj:
        return obj
    return None


def is_dump(data: bytes) -> bool:
    """True when ``data`` is a Flight Recorder dump (by content: a safe pickle or JSON dict with ``entries`` and ``version``).

    A hostile pickle is not a dump: this returns False for it without running anything.
    """
    try:
        return decode_dump(data, "<bytes>") is not None
    except InputError:
        return False


def head_kind(head: bytes) -> Literal["dump", "archive"] | None:
    """What a file's first ``HEAD_BYTES`` say it is: a Flight Recorder dump, a tar/zip archive (of a run), or neither (a log).

    A pickle is taken for a dump (a text log never starts like one; a hostile pickle is refused later, when read);
    JSON only with a dump's keys near its start (a JSON-lines log stays a log). Gzip is an archive only when a
    tar is inside (a ``.log.gz`` stays a log).
    """
    if looks_like_pickle(head):
        return "dump"
    if looks_like_json(head):
        return "dump" if any(key in head for key in _JSON_DUMP_KEYS) else None
    if head[:4] in (b"PK\x03\x04", b"PK\x05\x06") or head[257:262] == b"ustar":
        return "archive"
    if head[:2] == b"\x1f\x8b":
        try:
            inner = zlib.decompressobj(16 + zlib.MAX_WBITS).decompress(head, 1024)
        except zlib.error:
            return None
        return "archive" if inner[257:262] == b"ustar" else None
    return None
