"""Find which lines of a chunk match which of many regexes, in one pass.

Most lines of a training log match nothing, so the scan runs over the whole
chunk at once (hyperscan when installed, else one ``re`` pass per pattern) and
each candidate line is then confirmed with Python's ``re`` on that line alone.
"""

from __future__ import annotations

import bisect
import re
from collections.abc import Sequence


class Scanner:
    """Multi-pattern line scanner: ``scan(text)`` -> sorted ``(line_index, pattern_index)`` pairs."""

    def __init__(self, patterns: Sequence[str]) -> None:
        self.patterns = list(patterns)
        self.regexes = [re.compile(p) for p in self.patterns]
        self._hs_db, self._python_only = _compile_hyperscan(self.patterns)
        self._chunk_regexes = {i: re.compile(self.patterns[i], re.M) for i in self._python_only}

    def scan(self, text: str) -> list[tuple[int, int]]:
        """All (line index within text, pattern index) pairs where the pattern matches that line."""
        candidates: set[tuple[int, int]] = set()
        if self._hs_db is not None:
            data = text.encode("utf-8", errors="replace")
            ends: list[tuple[int, int]] = []

            def on_match(pattern_id: int, start: int, end: int, flags: int, context: object) -> None:
                ends.append((pattern_id, end))

            self._hs_db.scan(data, match_event_handler=on_match)
            if ends:
                byte_starts = _line_starts(data)
                for pattern_id, end in ends:
                    candidates.add((bisect.bisect_right(byte_starts, max(end - 1, 0)) - 1, pattern_id))
        if self._chunk_regexes:
            char_starts: list[int] | None = None
            for index, regex in self._chunk_regexes.items():
                for match in regex.finditer(text):
                    char_starts = char_starts or _line_starts(text)
                    candidates.add((bisect.bisect_right(char_starts, match.start()) - 1, index))
        if not candidates:
            return []
        lines = text.split("\n")
        return [
            (line_index, pattern_index)
            for line_index, pattern_index in sorted(candidates)
            if self.regexes[pattern_index].search(lines[line_index])
        ]


def _line_starts(text: str | bytes) -> list[int]:
    newline = "\n" if isinstance(text, str) else b"\n"
    starts = [0]
    find = text.find
    position = find(newline)  # type: ignore[arg-type]
    while position >= 0:
        starts.append(position + 1)
        position = find(newline, position + 1)  # type: ignore[arg-type]
    return starts


def _compile_hyperscan(patterns: list[str]) -> tuple[object | None, list[int]]:
    """A hyperscan database of the patterns it accepts, and the indexes it does not."""
    try:
        import hyperscan
    except ImportError:
        return None, list(range(len(patterns)))
    accepted: list[int] = []
    rejected: list[int] = []
    flags = hyperscan.HS_FLAG_MULTILINE | hyperscan.HS_FLAG_PREFILTER
    for index, pattern in enumerate(patterns):
        try:
            probe = hyperscan.Database()
            probe.compile(expressions=[_hs_pattern(pattern)], ids=[index], elements=1, flags=[flags])
            accepted.append(index)
        except Exception:  # hyperscan raises its own error type for unsupported syntax
            rejected.append(index)
    if not accepted:
        return None, rejected
    database = hyperscan.Database()
    database.compile(
        expressions=[_hs_pattern(patterns[i]) for i in accepted],
        ids=accepted,
        elements=len(accepted),
        flags=[flags] * len(accepted),
    )
    return database, rejected


def _hs_pattern(pattern: str) -> bytes:
    # Named groups are Python syntax; hyperscan (PCRE) wants plain groups.
    return re.sub(r"\(\?P<\w+>", "(", pattern).encode("utf-8")
