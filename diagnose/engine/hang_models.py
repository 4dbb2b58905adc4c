"""What hang reasoning works with: the timeouts of a log gathered once, the verdict a strategy fills in, and the run's ranks."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

from diagnose.parse.parsed_log import ParsedLog
from diagnose.schema import Event


@dataclass
class HangVerdict:
    """What the timeouts say: the suspect rank, why, the evidence events, and a mismatch if seen."""

    rank: int | None
    reason: str
    evidence: list[Event] = field(default_factory=list)
    mismatch: bool = False
    timed_out_ranks: list[int] = field(default_factory=list)
    summary: str = ""


@dataclass
class Timeouts:
    """The hang-related events of a log, gathered once for every strategy."""

    log: ParsedLog
    watchdogs: list[Event]
    statuses: list[Event]
    timed_out: list[int]

    def events(self, kind: str) -> list[Event]:
        """Every event of one kind."""
        return [e for e in self.log.events if e.kind == kind]


Strategy = Callable[[Timeouts, HangVerdict], bool]
"""Fills in the verdict and returns True when it decides; returns False to let the next one try."""


def world_ranks(log: ParsedLog, timed_out: list[int]) -> list[int]:
    """Every rank of the run: the launcher's world size (WORLD_SIZE, nnodes x nproc), else 0 up to the highest rank seen."""
    highest = max([*log.ranks, *timed_out], default=-1)
    return list(range(max(log.world_size(), highest + 1)))
