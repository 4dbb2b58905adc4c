"""The time of a line that prints none: the closest earlier line of the same rank that does, within LOOKBACK lines.

Tracebacks and progress bars print no clock, and a log can be mostly such lines (a bar on every line, an
mmengine record whose date the reader does not parse): each question would then read up to LOOKBACK lines back.
``RecentStamps`` answers for one chunk and remembers, per rank, the nearest stamped line it found for each line it was
asked about, so a later question stops where an earlier answer starts: each line is parsed at most once.
"""

from __future__ import annotations

from diagnose.parse.timestamps import YEARLESS, parse_timestamp

LOOKBACK = 200
NONE = -1
"""No stamped line of that rank within LOOKBACK lines of the line asked about."""


class RecentStamps:
    """Closest earlier timestamps in one chunk's lines (``rank_hint``: the rank the file name gives every line)."""

    def __init__(self, lines: list[str], rank_hint: int | None) -> None:
        """Nothing is read until asked."""
        self.lines = lines
        self.rank_hint = rank_hint
        self.stamps: dict[int, float | None] = {}
        self.nearest: dict[tuple[int, int | None], int] = {}

    def _stamp(self, j: int) -> float | None:
        if j not in self.stamps:
            self.stamps[j] = parse_timestamp(self.lines[j], year=YEARLESS)
        return self.stamps[j]

    def _same_rank(self, j: int, rank: int | None) -> bool:
        text = self.lines[j]
        return rank is None or rank == self.rank_hint or f"{rank}]" in text[:40] or f"{rank}:" in text[:12]

    def recent(self, i: int, rank: int | None) -> float | None:
        """The timestamp of the closest line before line ``i`` printed by ``rank``, within LOOKBACK lines, or None."""
        floor = max(-1, i - LOOKBACK)
        found = NONE
        for j in range(i - 1, floor, -1):
            if self._same_rank(j, rank) and self._stamp(j) is not None:
                found = j
                break
            known = self.nearest.get((j, rank))
            if known is not None:  # the answer for line j covers every line below it: none between it and j is stamped
                found = known if known > floor else NONE
                break
        self.nearest[(i, rank)] = found
        return self.stamps[found] if found != NONE else None
