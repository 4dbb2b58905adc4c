"""Rank the possible root causes from findings, hang reasoning and retrieval.

An initiating finding beats any cascade; among initiating findings the earliest
(by timestamp where both lines carry one, else by position in the same file)
wins a bonus, and each entry's best signature weight sets its base score.
Cascade-only logs are hangs: the hang verdict picks the entry and the rank.

"Earliest" is when things happened, not where they were printed: the error an exception wraps
(the message lines after ``BackendCompilerFailed: ... raised:``, ``Caught X in DataLoader worker``,
``DistBackendError: NCCL error``) was raised before its wrapper (``diagnose.engine.chains``). Generic
kill and abort lines after a person's stop (Ctrl-C) are its consequences and are not candidates
(``diagnose.engine.terminal``).
"""

from __future__ import annotations

from dataclasses import dataclass, field

from diagnose.encyclopedia.entries import Entry
from diagnose.engine.chains import causes_first
from diagnose.engine.hang_models import HangVerdict
from diagnose.engine.terminal import (
    CLOCK_TOLERANCE,
    PYTHON_WARNING,
    after_stop,
    before_the_run,
    ends_retrying,
    explained_by_stop,
    fatal_and_survived,
    recovered,
    stops,
)
from diagnose.engine.unexplained import code_error_after, unexplained_before
from diagnose.parse.parsed_log import ParsedLog
from diagnose.schema import Finding

EARLIEST_BONUS = 0.2
RETRIEVAL_WEIGHT = 0.1
MIN_SCORE = 0.35
MISMATCH_SCORE = 0.95
CASCADE_DISCOUNT = 0.7
"""A candidate known only from consequences (timeouts) weighs this share of an initiating one."""
STRONG_FIRST_RATIO = 0.75
"""The earliest-failure bonus goes to the first finding at least this share as specific as the most specific one."""
SURVIVED_DISCOUNT = 0.6
"""A failure the process lived past (a retried exception, a warning, a fallback) weighs this share when another one ended it."""
HANG_SCORE = 0.6
HANG_SCORE_NO_RANK = 0.5
HANG_ENTRY = "nccl-timeout-hang"
STRAGGLER_ENTRY = "straggler-rank"


@dataclass
class Scored:
    """One candidate entry with its score and the findings behind it."""

    entry_id: str
    score: float
    findings: list[Finding] = field(default_factory=list)
    earliest: bool = False
    notes: list[str] = field(default_factory=list)
    """Secondary findings to report with this candidate (e.g. minor fragmentation next to a full card)."""


def chronological(findings: list[Finding]) -> list[Finding]:
    """Findings sorted by when they happened: by timestamp when every one has one, else by reading order.

    Reading order is file order, then line: in one interleaved file it is time order; across per-rank
    files without timestamps nothing better is known. Timestamps closer than CLOCK_TOLERANCE do not
    order findings (hosts' clocks drift, output is buffered): those keep reading order.
    """
    if not findings or not all(f.timestamp is not None for f in findings):
        return sorted(findings, key=lambda f: f.order)
    by_time = sorted(findings, key=lambda f: (f.timestamp, f.order))
    start = by_time[0].timestamp or 0.0
    close = [f for f in by_time if (f.timestamp or 0.0) - start < CLOCK_TOLERANCE]
    return sorted(close, key=lambda f: f.order) + by_time[len(close) :]


FAILURE_EVENTS = frozenset({"traceback", "error_line", "signal", "agent_failed"})


def _anything_failed(log: ParsedLog) -> bool:
    """True when the log shows an exception, an error line, a signal or a launcher's failure report; a person's stop
    (``KeyboardInterrupt``) and what it set off are no failure."""
    stopped = stops(log)
    at_stop = {(line.source, line.line) for line in stopped}
    return bool(log.failure_records) or any(
        e.kind in FAILURE_EVENTS and (e.anchor.source, e.anchor.line) not in at_stop and not after_stop(e.anchor, stopped)
        for e in log.events
    )


def outlived_stall(log: ParsedLog, cascade: list[Finding]) -> bool:
    """True when a log whose only trouble is collectives waiting, reported at warning level (a stall inspector's
    reports), goes on past the last of them and nothing failed: the ranks waited for a slow one and the run went on.
    Unknown (False) when a file was not kept whole."""
    stalls = [f for f in cascade if f.entry_id == HANG_ENTRY]
    if not stalls or len(stalls) != len(cascade) or _anything_failed(log) or not all(recovered(log, f) for f in stalls):
        return False  # an error-level report (a watchdog stuck, about to terminate the process) is no slow rank
    last = max(stalls, key=lambda f: f.order)
    return log.lines.get(last.evidence.source) is not None and not ends_retrying(log, last)


def score_candidates(
    log: ParsedLog, entries: dict[str, Entry], hang: HangVerdict | None, retrieved: dict[str, float] | None = None
) -> list[Scored]:
    """Candidates best first; empty when nothing points at a known failure."""
    root_ids = {eid for eid, entry in entries.items() if entry.kind == "root-cause"}
    stopped = stops(log)
    initiating = [f for f in log.findings if f.role == "initiating" and f.entry_id in root_ids and not explained_by_stop(f, stopped)]
    stalled: set[int] = set()  # warnings the output stops on: named, but weighed as survived
    if initiating and all(recovered(log, f) for f in initiating) and not _anything_failed(log):
        # every failure line was a warning or was retried and nothing else failed: no root cause, unless the output
        # stops while it is still being retried (the run stalled there)
        initiating = [f for f in initiating if ends_retrying(log, f)]
        stalled = {id(f) for f in initiating}
    elif (
        initiating
        and all(PYTHON_WARNING.search(f.evidence.text) for f in initiating)
        and code_error_after(log, [f.evidence for f in initiating])
    ):
        return []  # the run lived past every Python warning, then died of an error in its own code: that is the start
    cascade = [f for f in log.findings if f.role == "cascade" and f.entry_id in root_ids and not explained_by_stop(f, stopped)]
    if not initiating and unexplained_before(log, [f.evidence for f in cascade] + [e.anchor for e in (hang.evidence if hang else [])]):
        return []  # a process's own exception, unknown to every entry, came before the consequences: it is the start
    scored: dict[str, Scored] = {}
    pool = initiating or cascade
    if pool:
        fatal, survived = fatal_and_survived(log, initiating)
        demoted = ({id(f) for f in survived} if fatal else set()) | {id(f) for f in before_the_run(log, fatal, initiating)} | stalled
        ordered = causes_first(log, chronological(pool))
        for finding in ordered:
            item = scored.setdefault(finding.entry_id, Scored(finding.entry_id, 0.0))
            item.findings.append(finding)
            factor = (1.0 if initiating else CASCADE_DISCOUNT) * (SURVIVED_DISCOUNT if id(finding) in demoted else 1.0)
            item.score = max(item.score, finding.weight * factor)
        # what ended the process outranks what it lived past, whatever their order
        eligible = [f for f in ordered if id(f) not in demoted] or ordered
        first = eligible[0]
        # a weak early line must not beat a strong, specific one a moment later
        strong_first = next((f for f in eligible if f.weight >= STRONG_FIRST_RATIO * max(x.weight for x in eligible)), first)
        # unless that early line is in the exception that ended its process and the strong one ended none (a launcher's
        # exit report, a line of another process after it): what failed after the exception is its consequence
        ended = {id(f) for f in fatal}
        before = eligible[: eligible.index(strong_first)]
        if id(strong_first) not in ended and any(id(f) in ended for f in before):
            strong_first = max((f for f in before if id(f) in ended), key=lambda f: f.weight)
        scored[strong_first.entry_id].score += EARLIEST_BONUS
        scored[strong_first.entry_id].earliest = True
        if stalled:
            scored[strong_first.entry_id].notes.append(
                "only warnings: the output stops while this failure is still being retried (the run stalled here)"
            )
    # no timeout expired (a verdict, if any, from stall reports alone), the stall reports stop and the run goes on: the
    # others waited for a slow rank
    no_timeout = hang is None or not hang.timed_out_ranks
    slow = no_timeout and not initiating and HANG_ENTRY in scored and STRAGGLER_ENTRY in entries and outlived_stall(log, cascade)
    if slow:
        item = scored.pop(HANG_ENTRY)
        item.entry_id = STRAGGLER_ENTRY
        item.notes.append("the run went on after the stall reports and nothing failed: a slow rank, not a hang")
        scored[STRAGGLER_ENTRY] = item
    if hang is not None and not initiating and not slow:
        if hang.mismatch:  # ranks blocked in different collectives at one SeqNum: stronger than "a timeout"
            item = scored.setdefault("collective-mismatch", Scored("collective-mismatch", 0.0))
            item.score = max(item.score, MISMATCH_SCORE)
        elif "nccl-timeout-hang" in entries:
            item = scored.setdefault("nccl-timeout-hang", Scored("nccl-timeout-hang", 0.0))
            item.score = max(item.score, HANG_SCORE if hang.rank is not None else HANG_SCORE_NO_RANK)
    for entry_id, similarity in (retrieved or {}).items():
        if entry_id in scored:
            scored[entry_id].score += RETRIEVAL_WEIGHT * similarity
    ranked = sorted(scored.values(), key=lambda s: -s.score)
    for item in ranked:
        item.score = round(min(item.score, 1.0), 3)
    return [s for s in ranked if s.score >= MIN_SCORE]
