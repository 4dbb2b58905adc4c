"""Numeric discriminator for a straggler: one rank the slowest by a wide margin, report after report.

Megatron-LM's straggler report (``--log-straggler``) prints, every few iterations, the fastest and the slowest
round-trip time across ranks with the rank that holds each (``MnRtt/Rnk: 4847.84ms/44 | MxRtt/Rnk:
9898.54ms/37``); ``straggler-rank``'s noise signature captures ``fastest_ms``, ``slowest_ms`` and the slow
``rank``. Healthy runs print these reports too, with the two close together. One rank holding the maximum at
RATIO times the minimum in MIN_REPORTS reports is a straggler. A job that then ran out of its time limit or
timed out in a collective ended because of it (SLOWNESS_ENDINGS); any other failure stays the root cause,
with the straggler as a note.
"""

from __future__ import annotations

import re
from collections import defaultdict
from dataclasses import dataclass
from functools import lru_cache

from diagnose.engine.candidates import Scored
from diagnose.parse.parsed_log import ParsedLog
from diagnose.schema import Finding

ENTRY = "straggler-rank"
RATIO = 1.5
"""The slowest rank's time over the fastest's; Megatron's own reports on healthy runs stay within a few percent."""
MIN_REPORTS = 3
SLOWNESS_ENDINGS = frozenset({"process-preempted", "nccl-timeout-hang"})
"""Endings a slow rank explains: the scheduler's time limit ran out, or the others' collectives timed out waiting."""
SHIFT = 0.05


@dataclass(frozen=True)
class Straggler:
    """A rank that was the slowest by RATIO or more in ``reports`` reports (``ratio``: the largest seen)."""

    rank: int
    ratio: float
    findings: list[Finding]

    def note(self) -> str:
        """The secondary finding shown next to another root cause."""
        return (
            f"also: rank {self.rank} was the slowest rank, up to {self.ratio:.1f}x the fastest, in {len(self.findings)} straggler reports"
        )


@lru_cache(maxsize=16)
def _compiled(pattern: str) -> re.Pattern[str]:
    return re.compile(pattern)


def _ratio(finding: Finding) -> float | None:
    match = _compiled(finding.signature).search(finding.evidence.text)
    groups = match.groupdict() if match else {}
    try:
        fastest, slowest = float(groups["fastest_ms"]), float(groups["slowest_ms"])
    except (KeyError, TypeError, ValueError):
        return None
    return slowest / fastest if fastest > 0 else None


def straggler(log: ParsedLog) -> Straggler | None:
    """The rank that was slowest by RATIO in at least MIN_REPORTS reports, else None."""
    slow: dict[int, list[tuple[Finding, float]]] = defaultdict(list)
    for finding in log.findings:
        if finding.entry_id == ENTRY and finding.role == "noise" and finding.rank is not None:
            ratio = _ratio(finding)
            if ratio is not None and ratio >= RATIO:
                slow[finding.rank].append((finding, ratio))
    # the reader keeps the first few and the latest line per rank and signature: enough to count to MIN_REPORTS
    best = max(slow.items(), key=lambda item: len(item[1]), default=None)
    if best is None or len(best[1]) < MIN_REPORTS:
        return None
    rank, reports = best
    return Straggler(rank, max(r for _, r in reports), [f for f, _ in reports])


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
