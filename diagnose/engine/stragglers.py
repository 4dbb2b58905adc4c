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

A process that kept working alone is the third: ranks time out in a collective while a progress bar (tqdm's
``[29:59<04:26, ...]``, ``diagnose.parse.progress_bars``) has run for as long as their timeout when they report it. The
others entered the collective when that work began (a dataset ``map``, caching, an evaluation on rank 0 only behind
``main_process_first`` or a barrier) and waited for it. A process blocked in the collective too stops updating its
bar, so its last bar shows no such match. Its rank is the one rank that did not time out, else the bar's own prefix,
else unknown. (Any line that merely repeats below the timeout is no such sign: other ranks' reports repeat too.)
The report is the first watchdog timeout, with its own ``Timeout(ms)``; without one, the first traceback raised while
its process waited in a barrier (``WAITING_FRAME``: a ``barrier`` call, a "main process first" block), whose timeout
is not printed: then it is one of the defaults (``DEFAULT_TIMEOUTS``). Only when every process's traceback is such a
wait: one that raised anywhere else did not merely wait, and its error comes first.

A job that then ran out of its time limit or timed out in a collective ended because of the straggler
(SLOWNESS_ENDINGS); any other failure stays the root cause, with the straggler as a note.
"""

from __future__ import annotations

import re
from collections import defaultdict
from dataclasses import dataclass

from diagnose.engine.candidates import Scored
from diagnose.engine.captures import captured
from diagnose.engine.hang_models import world_ranks
from diagnose.parse.events import LAUNCHER_EXCEPTION
from diagnose.parse.lines import make_line
from diagnose.parse.parsed_log import ParsedLog
from diagnose.parse.prefixes import body_of
from diagnose.parse.progress_bars import bar_elapsed
from diagnose.schema import Event, Finding, LogLine

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
ALONE_MATCH = 0.05
"""A progress bar's elapsed time within this share of the collective timeout counts as having run for all of it."""
BAR_LOOKBACK = 20
"""Lines above the first timeout report where the busy process's last progress bar may be."""
WAITING_FRAME = re.compile(
    r'File "[^"]+", line \d+, in (?:barrier|main_process_first|local_main_process_first|zero_first|torch_distributed_zero_first)\b'
    r"|^\s*with \S*\b(?:main_process_first|local_main_process_first|zero_first|torch_distributed_zero_first)\("
)
"""A traceback line of a process waiting for the others: a ``dist.barrier`` frame, and the blocks in which every process
but the main one waits in a barrier while it works alone (transformers' and accelerate's ``main_process_first``,
axolotl's ``zero_first``, YOLOv5's ``torch_distributed_zero_first``), by their frame or the ``with`` line that entered
them (all a traceback cut inside the block shows)."""
DEFAULT_TIMEOUTS = (1800.0, 600.0)
"""A timeout that is not printed: torch's ``default_pg_timeout`` (also transformers' ``ddp_timeout`` and accelerate's
default), and ProcessGroupNCCL's own default since torch 2.2."""


@dataclass(frozen=True)
class Straggler:
    """A rank that was the slowest by RATIO or more in ``reports`` reports (``ratio``: the largest seen), or, with
    ``alone`` set, a process (its rank when known) that worked on while the others timed out waiting for it."""

    rank: int | None
    ratio: float
    findings: list[Finding]
    measure: str = "the fastest rank's round trip"
    alone: str = ""
    """For a process that worked alone: what it did while the others waited (the note says that instead)."""

    def note(self) -> str:
        """The secondary finding shown next to another root cause."""
        if self.alone:
            return f"also: {self.alone}"
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


def _timeout_seconds(event: Event) -> float | None:
    value = event.fields.get("Timeout(ms)", "")
    return int(value) / 1000 if value.isdigit() else None


def _first_wait(log: ParsedLog) -> tuple[LogLine, tuple[float, ...], list[Event]] | None:
    """The first report of processes that gave up waiting for another (see the module docstring): (its line, the timeouts
    it may have had, every such report), else None."""
    timed = [(e, seconds) for e in log.events if e.kind == "watchdog" and (seconds := _timeout_seconds(e)) is not None]
    if timed:
        first, seconds = min(timed, key=lambda pair: (pair[0].anchor.source, pair[0].anchor.line))
        return first.anchor, (seconds,), [e for e, _ in timed]
    tracebacks = [e for e in log.events if e.kind == "traceback" and not LAUNCHER_EXCEPTION.search(e.anchor.text)]
    waits = [e for e in tracebacks if any(WAITING_FRAME.search(body_of(line.text)) for line in e.lines)]
    if waits and len(waits) == len(tracebacks):  # a process that raised anywhere else did not merely wait
        first = min(waits, key=lambda e: (e.anchor.source, e.anchor.line))
        return first.lines[0], DEFAULT_TIMEOUTS, waits  # its header: a bar it was glued to is on that line
    return None


def _worked_alone(log: ParsedLog) -> Straggler | None:
    """A progress bar, right above the first report of processes that gave up waiting, that had run for as long as
    their timeout: its process worked on while the others waited in the collective, else None."""
    waited = _first_wait(log)
    if waited is None:
        return None
    where, timeouts, reports = waited
    # the report's own line first: a bar the report was glued to (no newline between them) is the latest
    numbers = range(where.line, max(0, where.line - BAR_LOOKBACK - 1), -1)
    texts = ((n, where.text if n == where.line else log.line_text(where.source, n)) for n in numbers)
    bars = ((n, text, bar_elapsed(text)) for n, text in texts if text is not None)
    found = next(((n, text, seconds) for n, text, seconds in bars if seconds is not None), None)
    if found is None:
        return None
    number, text, elapsed = found
    timeout = next((t for t in timeouts if abs(elapsed - t) <= ALONE_MATCH * t), None)
    if timeout is None:
        return None
    timed_out = sorted({e.rank for e in reports if e.rank is not None})
    silent = sorted(set(world_ranks(log, timed_out)) - set(timed_out)) if timed_out else []
    glued = number == where.line  # the bar and another rank's report on one line: the line's rank is the report's
    line = where if glued else make_line(where.source, number, text)
    rank = silent[0] if len(silent) == 1 else (None if glued else line.rank)
    who = f"rank {rank}" if rank is not None else "a process"
    alone = f"{who} was {elapsed:.0f} s into a progress bar when the others gave up waiting for it after {timeout:.0f} s"
    bar = Finding(entry_id=ENTRY, signature="", role="noise", weight=0.3, rank=rank, order=number, evidence=line)
    return Straggler(rank, 1.0, [bar], measure="", alone=alone)


def straggler(log: ParsedLog) -> Straggler | None:
    """The rank the timing reports show as a straggler (round trips first, then input times, then a process that worked
    alone while the others timed out), else None."""
    reports = [f for f in log.findings if f.entry_id == ENTRY and f.role == "noise"]
    return _round_trip_straggler(reports) or _input_time_straggler(reports) or _worked_alone(log)


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
    named = Scored(ENTRY, round(max(score, 0.6), 3), promoted, earliest=True)
    if found.alone:
        named.notes.append(found.alone)
    return [named, *others]
