"""Numeric discriminator for a straggler: one rank the slowest by a wide margin, report after report.

Megatron-LM's straggler report (``--log-straggler``) prints, every few iterations, the fastest and the slowest
round-trip time across ranks with the rank that holds each (``MnRtt/Rnk: 4847.84ms/44 | MxRtt/Rnk:
9898.54ms/37``); ``straggler-rank``'s noise signature captures ``fastest_ms``, ``slowest_ms`` and the slow
``rank``. Healthy runs print these reports too, with the two close together. One rank holding the maximum at
RATIO times the minimum in MIN_REPORTS reports is a straggler.

Per-rank input times (``data_time: 0.0052`` as detectron2 and mmengine print it, ``data 0.039s``) are the other
report: ``straggler-rank``'s input-time noise signature captures ``data_s`` on each rank's lines. Healthy ranks'
input times jitter within a few times each other; a rank whose latest MIN_REPORTS input times are all DATA_RATIO
times the other ranks' median, and at least DATA_EXCESS_S longer, is a straggler: the others wait for it in
their collectives.

A job that then ran out of its time limit or timed out in a collective ended because of the straggler
(SLOWNESS_ENDINGS); any other failure stays the root cause, with the straggler as a note.
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass

from diagnose.engine.candidates import Scored
from diagnose.engine.captures import captured
from diagnose.parse.parsed_log import ParsedLog
from diagnose.schema import Finding

ENTRY = "straggler-rank"
RATIO = 1.5
"""The slowest rank's time over the fastest's; Megatron's own reports on healthy runs stay within a few percent."""
MIN_REPORTS = 3
SLOWNESS_ENDINGS = frozenset({"process-preempted", "nccl-timeout-hang"})
"""Endings a slow rank explains: the scheduler's time limit ran out, or the others' collectives timed out waiting."""
SHIFT = 0.05
DATA_RATIO = 10.0
"""A rank's input time over the other ranks' median: healthy ranks' input times stay within a few times each other."""
DATA_EXCESS_S = 1.0
"""And at least this many seconds longer: a 10x jitter of milliseconds stalls no collective."""
MIN_PEERS = 2
"""Other ranks reporting input times: with fewer there is no typical rank to compare with."""


@dataclass(frozen=True)
class Straggler:
    """A rank that was the slowest by RATIO or more in ``reports`` reports (``ratio``: the largest seen)."""

    rank: int
    ratio: float
    findings: list[Finding]
    measure: str = "the fastest rank's round trip"

    def note(self) -> str:
        """The secondary finding shown next to another root cause."""
        return (
            f"also: rank {self.rank} was the slowest rank, up to {self.ratio:.1f}x {self.measure}, in {len(self.findings)} timing reports"
        )


def _round_trip_straggler(reports: list[Finding]) -> Straggler | None:
    """Megatron's reports: the rank that was slowest by RATIO in at least MIN_REPORTS reports, else None."""
    slow: dict[int, list[tuple[Finding, float]]] = defaultdict(list)
    for finding in reports:
        numbers = captured(finding, "fastest_ms", "slowest_ms")
        if numbers and numbers[0] > 0 and finding.rank is not None and numbers[1] / numbers[0] >= RATIO:
            slow[finding.rank].append((finding, numbers[1] / numbers[0]))
    # the reader keeps the first few and the latest line per rank and signature: enough to count to MIN_REPORTS
    best = max(slow.items(), key=lambda item: len(item[1]), default=None)
    if best is None or len(best[1]) < MIN_REPORTS:
        return None
    rank, found = best
    return Straggler(rank, max(r for _, r in found), [f for f, _ in found])


def _input_time_straggler(reports: list[Finding]) -> Straggler | None:
    """Per-rank input times: the rank whose latest MIN_REPORTS times all stand DATA_RATIO over the others' median."""
    latest: dict[int, list[tuple[Finding, float]]] = defaultdict(list)
    for finding in sorted(reports, key=lambda f: f.order):
        numbers = captured(finding, "data_s")
        if numbers is not None and finding.rank is not None:
            latest[finding.rank].append((finding, numbers[0]))
    last = {rank: seen[-MIN_REPORTS:] for rank, seen in latest.items() if len(seen) >= MIN_REPORTS}
    for rank, seen in last.items():
        peers = sorted(value for other, runs in last.items() if other != rank for _, value in runs)
        if len(last) - 1 < MIN_PEERS:
            return None
        typical = peers[len(peers) // 2]
        floor = max(typical * DATA_RATIO, typical + DATA_EXCESS_S)
        if all(value >= floor for _, value in seen):
            ratio = min(value for _, value in seen) / max(typical, 0.001)
            return Straggler(rank, ratio, [f for f, _ in seen], measure="the other ranks' median input time")
    return None


def straggler(log: ParsedLog) -> Straggler | None:
    """The rank the timing reports show as a straggler (round trips first, then input times), else None."""
    reports = [f for f in log.findings if f.entry_id == ENTRY and f.role == "noise"]
    return _round_trip_straggler(reports) or _input_time_straggler(reports)


def apply_straggler(ranked: list[Scored], log: ParsedLog) -> list[Scored]:
    """Name the straggler when the job ended only as slowness ends; else add it as a note to the root cause."""
    found = straggler(log)
    if found is None:
        return ranked
    if ranked and any(s.entry_id not in SLOWNESS_ENDINGS | {ENTRY} for s in ranked[:1]):
        ranked[0].notes.append(found.note())
        return ranked
    promoted = [f.model_copy(update={"role": "initiating"}) for f in found.findings]
    score = min(1.0, max((s.score for s in ranked), default=0.0) + SHIFT)
    others = [s for s in ranked if s.entry_id != ENTRY]
    return [Scored(ENTRY, round(max(score, 0.6), 3), promoted, earliest=True), *others]
