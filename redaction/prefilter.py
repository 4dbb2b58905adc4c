"""One multi-pattern pass over a chunk that finds the few lines where a recognizer can match.

Hyperscan (PyPI ``hyperscan``) scans all prefilter patterns of all recognizers at once; each
match's end offset names a candidate line and the pattern id names the recognizer to run there.
Without Hyperscan the same patterns run as Python regexes over the chunk: slower, same result.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

try:
    import hyperscan
except ImportError:  # pragma: no cover - depends on the platform's wheels
    hyperscan = None

# Candidate lines: start byte offset -> (end offset without the newline, recognizer ids).
Candidates = dict[int, tuple[int, set[int]]]


class Prefilter:
    """Compiled prefilter patterns; ``patterns[i]`` is ``(regex, caseless, owner_id)``."""

    def __init__(self, patterns: Sequence[tuple[str, bool, int]], *, use_hyperscan: bool = True) -> None:
        self._owners = [owner for _, _, owner in patterns]
        self._db = None
        self._regexes: list[re.Pattern[bytes]] = []
        if use_hyperscan and hyperscan is not None:
            self._db = hyperscan.Database(mode=hyperscan.HS_MODE_BLOCK)
            base = hyperscan.HS_FLAG_MULTILINE | hyperscan.HS_FLAG_PREFILTER | hyperscan.HS_FLAG_ALLOWEMPTY
            self._db.compile(
                expressions=[regex.encode() for regex, _, _ in patterns],
                ids=list(range(len(patterns))),
                elements=len(patterns),
                flags=[base | (hyperscan.HS_FLAG_CASELESS if caseless else 0) for _, caseless, _ in patterns],
            )
        else:
            self._regexes = [
                re.compile(regex.encode(), re.MULTILINE | (re.IGNORECASE if caseless else 0)) for regex, caseless, _ in patterns
            ]

    @property
    def uses_hyperscan(self) -> bool:
        """True when the fast path (Hyperscan) is in use."""
        return self._db is not None

    def new_scratch(self) -> object:
        """Return the per-user scan workspace (Hyperscan scratch; one per thread of use)."""
        return hyperscan.Scratch(self._db) if self._db is not None else None

    def scan(self, data: bytes, scratch: object = None) -> Candidates:
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
        for pattern_id, end in sorted(ends, key=lambda item: item[1]):
            pos = max(end - 1, 0)
            if not start <= pos <= stop:
                start = data.rfind(b"\n", 0, pos) + 1
                stop = data.find(b"\n", pos)
                stop = len(data) if stop < 0 else stop
                ids = candidates.setdefault(start, (stop, set()))[1]
            ids.add(self._owners[pattern_id])
        return candidates


def _collect(pattern_id: int, start: int, end: int, flags: int, ends: list[tuple[int, int]]) -> None:
    """Hyperscan match callback: remember the pattern and where its match ends."""
    ends.append((pattern_id, end))
