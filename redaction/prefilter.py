"""One multi-pattern pass over a chunk that finds the few lines where a recognizer can match.

Hyperscan (PyPI ``hyperscan``) scans all prefilter patterns of all recognizers at once; each
match's end offset names a candidate line and the pattern id names the recognizer to run there.
Without Hyperscan the same patterns run as Python regexes over the chunk: slower, same result, as long as
no pattern lets one match end on several lines (Hyperscan reports every match end, ``finditer`` only the
non-overlapping ones): a pattern spanning lines ends on the line to mask, and a test holds both engines to one output.

Compiling the Hyperscan database takes about half a second for the ~270 patterns, so the
compiled database is cached (``hyperscan.dumpb``/``loadb``) in a file named by a hash of
the pattern source, flags and Hyperscan version: a change to any pattern names a new file,
and a missing, truncated or corrupt file is rebuilt and rewritten transparently.
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Sequence
from pathlib import Path
from typing import Any, NamedTuple, cast

from redaction.cache import prune, read_blob, write_blob

try:
    import hyperscan
except ImportError:  # pragma: no cover - depends on the platform's wheels
    hyperscan = None  # type: ignore[assignment]  # the pure-Python path is used then

# Owner ids of the redactor's own passes (recognizer ids are 0 and up): private-key blocks,
# and random-looking values no recognizer claims (``redaction.unsure``).
PEM_ID = -1
UNSURE_ID = -2
# Lines a block-level recognizer (launcher prefixes) may change: a block without one skips that pass.
BLOCK_ID = -3

# Candidate lines: start byte offset -> (end offset without the newline, recognizer ids).
Candidates = dict[int, tuple[int, set[int]]]


class Scan(NamedTuple):
    """What one pass found in a block: its candidate lines, and whether any line may carry a launcher prefix."""

    candidates: Candidates
    block_lines: bool


class Prescan(NamedTuple):
    """A block and its scan, made ahead of masking, maybe on another thread (``Redactor.prescan``)."""

    text: str
    data: bytes
    scan: Scan


class Prefilter:
    """Compiled prefilter patterns; ``patterns[i]`` is ``(regex, caseless, owner_id)``."""

    def __init__(self, patterns: Sequence[tuple[str, bool, int]], *, use_hyperscan: bool = True, cache_dir: Path | None = None) -> None:
        self._owners = [owner for _, _, owner in patterns]
        self._db = None
        self._regexes: list[re.Pattern[bytes]] = []
        self.loaded_from_cache = False
        if use_hyperscan and hyperscan is not None:
            path = cache_dir / f"redaction-prefilter-{source_key(patterns)}.hsdb" if cache_dir is not None else None
            self._db = _load(path) if path is not None else None
            self.loaded_from_cache = self._db is not None
            if self._db is None:
                self._db = _compile(patterns)
                if path is not None and write_blob(path, hyperscan.dumpb(self._db)):
                    prune(path.parent, "redaction-prefilter-*.hsdb", keep=path)
        else:
            self._regexes = [
                re.compile(regex.encode(), re.MULTILINE | (re.IGNORECASE if caseless else 0)) for regex, caseless, _ in patterns
            ]

    def new_scratch(self) -> Any:
        """Return the per-user scan workspace (Hyperscan scratch; one per thread of use)."""
        return hyperscan.Scratch(self._db) if self._db is not None else None

    def scan(self, data: bytes, scratch: Any = None) -> Scan:
        """Return the candidate lines of ``data`` with the recognizers to run on each."""
        ends: list[tuple[int, int]] = []
        if self._db is not None:
            self._db.scan(data, match_event_handler=_collect, context=ends, scratch=scratch)
        else:
            for pattern_id, regex in enumerate(self._regexes):
                ends.extend((pattern_id, m.end()) for m in regex.finditer(data))
        candidates: Candidates = {}
        start = stop = -1
        ids: set[int] = set()
        block_lines = False
        for pattern_id, end in sorted(ends, key=lambda item: item[1]):
            if self._owners[pattern_id] == BLOCK_ID:
                block_lines = True
                continue
            pos = max(end - 1, 0)
            if not start <= pos <= stop:
                start = data.rfind(b"\n", 0, pos) + 1
                stop = data.find(b"\n", pos)
                stop = len(data) if stop < 0 else stop
                ids = candidates.setdefault(start, (stop, set()))[1]
            ids.add(self._owners[pattern_id])
        return Scan(candidates, block_lines)


def _collect(pattern_id: int, start: int, end: int, flags: int, ends: object) -> None:
    """Hyperscan match callback: remember the pattern and where its match ends (``ends`` is the scan's list)."""
    cast("list[tuple[int, int]]", ends).append((pattern_id, end))


def source_key(patterns: Sequence[tuple[str, bool, int]]) -> str:
    """Name a compiled database by everything it is built from."""
    version = getattr(hyperscan, "__version__", "") if hyperscan is not None else ""
    source = json.dumps([1, version, [[regex, caseless] for regex, caseless, _ in patterns]])
    return hashlib.sha256(source.encode()).hexdigest()[:32]


def _flags(caseless: bool) -> int:
    """Hyperscan flags of one prefilter pattern."""
    base = hyperscan.HS_FLAG_MULTILINE | hyperscan.HS_FLAG_PREFILTER | hyperscan.HS_FLAG_ALLOWEMPTY
    return base | (hyperscan.HS_FLAG_CASELESS if caseless else 0)


def _compile(patterns: Sequence[tuple[str, bool, int]]) -> hyperscan.Database:
    """Compile the prefilter patterns into one Hyperscan block-mode database."""
    db = hyperscan.Database(mode=hyperscan.HS_MODE_BLOCK)
    db.compile(
        expressions=[regex.encode() for regex, _, _ in patterns],
        ids=list(range(len(patterns))),
        elements=len(patterns),
        flags=[_flags(caseless) for _, caseless, _ in patterns],
    )
    return db


def _load(path: Path) -> hyperscan.Database | None:
    """Load a cached database; None when it is missing, corrupt or from another Hyperscan build."""
    payload = read_blob(path)
    if payload is None:
        return None
    try:
        return hyperscan.loadb(payload, hyperscan.HS_MODE_BLOCK)
    except hyperscan.error:
        return None
