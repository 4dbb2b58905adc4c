"""When no signature names a root cause: a person's stop, the launcher's teardown alone, then the nearest example.

0. A person stopped the run (``DELIBERATE``: Ctrl-C, a closed terminal) and no process printed an error of its own
   before the stop: the stop is how the run ended, and its entry is named, weakly, with no initiating rank (a
   person is not a rank). An error before the stop that no entry knows leads an ``unknown`` answer instead: the
   stop may have ended a run that was already failing.

1. Only a launcher's teardown is in the log (``elastic-teardown``, ``mpi-abort``): its entry is named, weakly,
   when no worker printed an exception of its own (then that exception leads an ``unknown`` answer, with the
   launcher's rank) and the launcher reports a failure a person did not cause (a deliberate stop is not a
   failure) and not only victims' signals; the rank is the launcher's root cause or the first rank it saw exit
   on its own. A teardown
   that reports no failure names nothing: without a process the launcher saw exit with a failure code, its best
   line must reach ``MIN_SCORE`` on its own (its weight times ``TEARDOWN_ONLY``). The generic end-of-job lines
   (Slurm's ``*** JOB ... CANCELLED AT ... ***`` without ``DUE TO``, ``tasks N: Terminated``, "Job step aborted")
   end an ``scancel`` as well as a failed step, so alone they are no failure: ``unknown``.
2. The log's error-like lines (``lookup_lines``: its error lines, else the lines with a failure word) are embedded
   and their nearest signature examples looked up in the vector store (``KBIndex.nearest_examples``); each entry
   scores by its nearest example and the support of its next ones (``nearest``). When the best entry leads every
   other by a margin calibrated on synthetic and dev (``calibration.json``'s ``retrieval_threshold``) it is
   proposed with a low score, its nearest example as the reason. Below it: ``unknown``, with a note saying what was
   nearest. After a person's stop only the error lines before it are looked up (what follows the stop is its
   consequence), and the ``unknown`` says the run was stopped.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from diagnose.encyclopedia.entries import Entry
from diagnose.encyclopedia.example_lines import GENERIC
from diagnose.encyclopedia.index_models import ExampleHit
from diagnose.engine.attribution import VICTIM_EXITS, exits
from diagnose.engine.calibration import retrieval_threshold
from diagnose.engine.candidates import MIN_SCORE, Scored, chronological
from diagnose.engine.lookup_lines import error_lines, lookup_lines
from diagnose.engine.memory import GENERAL_CASE
from diagnose.engine.terminal import DELIBERATE, echoes_stop, stops
from diagnose.engine.unexplained import comes_before, raised_before_exit
from diagnose.parse.events import LAUNCHER_EXCEPTION
from diagnose.parse.parsed_log import ParsedLog
from diagnose.schema import Finding, LogLine

if TYPE_CHECKING:
    from collections.abc import Iterable

    from diagnose.encyclopedia.index import KBIndex

TEARDOWN_ONLY = 0.5
"""A teardown-only answer weighs this share of its signature's weight."""
RETRIEVED_SCORE = 0.4
"""The score of a retrieved proposal: above MIN_SCORE, below any signature's answer."""
CANDIDATES = 25
"""Examples looked at per line (the vector store's nearest, scored again by specificity)."""
SUPPORT = 3
SUPPORT_SHARE = 0.5
"""An entry's score adds this share of the mean of its next SUPPORT examples' similarities to its best one's.
Chosen by cross-fitting on synthetic+dev (fit the margin on one half of the cases, count proposals on the other):
the best example alone gave 177 right proposals and 19 wrong, this 358 and 24, with as many ``unknown`` cases
proposed (2); docs/retrieval.md has the table."""
STOP_SHARE = 0.5
"""A named stop weighs this share of its signature's weight: it says how the run ended, not what went wrong."""
STOPPED_NOTE = "stopped by a person ({file}:{line}): the kill and abort lines after it are its consequences, not a root cause"
RETRIEVED = "retrieval"
"""The signature field of a retrieval proposal's finding (no pattern matched it)."""
RETRIEVAL_NOTE = "retrieval: nearest example of {entry} by a margin of {margin:.2f} (similarity {score:.2f})"
"""The note's fixed head (``diagnose eval --calibrate`` reads it back to fit the threshold)."""


def teardown_only(log: ParsedLog, entries: dict[str, Entry]) -> list[Scored]:
    """The collateral entry whose teardown is all the log shows, when it reports a failure."""
    launcher_exits = [code for _, code, _, _ in exits(log) if code != 0]
    if launcher_exits and all(code in VICTIM_EXITS for code in launcher_exits):
        return []
    floor = 0.0 if launcher_exits else MIN_SCORE  # a process the launcher saw fail, or a line specific enough alone
    collateral = {eid for eid, entry in entries.items() if entry.kind == "collateral" and eid not in DELIBERATE}
    if _stopped_first(log) or _worker_raised(log):
        return []
    scored: dict[str, Scored] = {}
    for finding in chronological([f for f in log.findings if f.entry_id in collateral and f.role == "teardown"]):
        item = scored.setdefault(finding.entry_id, Scored(finding.entry_id, 0.0))
        item.findings.append(finding)
        item.score = round(max(item.score, finding.weight * TEARDOWN_ONLY), 3)
    return sorted((s for s in scored.values() if s.score >= floor), key=lambda s: -s.score)


def _stopped_first(log: ParsedLog) -> bool:
    """True when a person stopped the run before any launcher teardown began (a teardown already under way at the
    stop, ``failed (exitcode: 1)`` or SIGTERMs to the others, means something failed first: the stop came after). Slurm's
    own lines for the same cancel (``echoes_stop``) are the stop, whichever comes first."""
    stopped = stops(log)
    if not stopped:
        return False
    teardown = [f.evidence for f in log.findings if f.role == "teardown" and f.entry_id not in DELIBERATE]
    return not any(comes_before(line, stopped[0]) and not echoes_stop(line, stopped) for line in teardown)


def _worker_raised(log: ParsedLog) -> bool:
    """True when a process printed its own exception (not the launcher's report of it): the teardown is then not all
    the log shows; that exception, known to no entry, leads an ``unknown`` answer instead."""
    return next(raised_before_exit(log), None) is not None


def named_stop(log: ParsedLog) -> list[Scored]:
    """The person's stop, when nothing before it failed: how the run ended, with no rank. A launcher already tearing
    the run down before the stop (``failed (exitcode: 1)``, SIGTERMs to the others) means something failed first."""
    deliberate = [f for f in log.findings if f.entry_id in DELIBERATE]
    stop_lines = {(f.evidence.source, f.evidence.line) for f in deliberate}
    stopped = stops(log)
    own_errors = [
        line
        for line in error_lines(log)
        if (line.source, line.line) not in stop_lines and not LAUNCHER_EXCEPTION.search(line.text) and not echoes_stop(line, stopped)
    ]
    if not deliberate or own_errors or not _stopped_first(log):
        return []
    first = stopped[0]
    ordered = chronological(deliberate)
    entry_id = ordered[0].entry_id
    findings = [f.model_copy(update={"rank": None, "host": None}) for f in ordered if f.entry_id == entry_id]
    score = round(max(f.weight for f in findings) * STOP_SHARE, 3)
    return [Scored(entry_id, score, findings, earliest=True, notes=[STOPPED_NOTE.format(file=first.source, line=first.line)])]


@dataclass(frozen=True)
class Match:
    """The entry whose examples come nearest to the log's unknown lines, and by how much it beats the others."""

    line: LogLine
    hit: ExampleHit
    margin: float
    """The entry's score (``_support``) minus the best score of any other entry (0 when it is alone)."""


def _support(hits: list[tuple[LogLine, ExampleHit]]) -> float:
    """An entry's score: its best example's similarity plus ``SUPPORT_SHARE`` of the mean similarity of its next
    ``SUPPORT`` examples (over all lines; a missing one counts 0)."""
    scores = sorted((hit.score for _, hit in hits), reverse=True)
    return scores[0] + SUPPORT_SHARE * sum(scores[1 : 1 + SUPPORT]) / SUPPORT


def nearest(log: ParsedLog, index: KBIndex, without: Iterable[str] = ()) -> Match | None:
    """The entry nearest to the log's error lines (None without error lines or neighbours).

    Each line's ``CANDIDATES`` nearest examples are scored by specificity (``KBIndex.nearest_examples``); a special
    case decided from captured numbers counts as its general case (``memory.GENERAL_CASE``: a line no signature
    matched has no numbers to decide it). Each entry is scored by its best example and, less, by how near its next
    examples come (``_support``): several of an entry's wordings near the log say more than one lucky example. The
    decision is the ``margin``: an entry proposed must be near *and* nearer than every other entry, for when two
    entries share a message (a watchdog's wrapper, a DataLoader worker's signal line) the nearest one is a coin toss.
    A generic message (an entry's ``retrieval_lines``: Python's own exceptions, under ``program-error``) is never
    proposed but competes: a line nearer to it than to any root cause gets a negative margin. ``without``: signature
    patterns whose examples are left out (the calibration's held-out wording).
    """
    held_out = set(without)
    lines = lookup_lines(log, known={f.signature for f in log.findings} - held_out)
    by_entry: dict[str, list[tuple[LogLine, ExampleHit]]] = {}
    for line, hits in zip(lines, index.nearest_examples([line.text for line in lines], without=without, k=CANDIDATES), strict=True):
        for found in hits:
            hit = found.model_copy(update={"entry_id": GENERAL_CASE.get(found.entry_id, found.entry_id)})
            by_entry.setdefault(hit.entry_id, []).append((line, hit))
    scored = sorted(((_support(hits), max(hits, key=lambda pair: pair[1].score)) for hits in by_entry.values()), key=lambda s: -s[0])
    proposable = [item for item in scored if item[1][1].signature != GENERIC]  # a generic message only competes
    if not proposable:
        return None
    score, (line, hit) = proposable[0]
    runner_up = max((other for other, (_, found) in scored if found.entry_id != hit.entry_id), default=0.0)
    return Match(line, hit, round(score - runner_up, 4))


def retrieved(log: ParsedLog, index: KBIndex, threshold: float | None = None) -> tuple[list[Scored], list[str]]:
    """(a proposal from the nearest example when it beats the others by the calibrated margin, notes saying what was
    nearest)."""
    found = nearest(log, index)
    if found is None:
        return [], []
    line, hit = found.line, found.hit
    limit = retrieval_threshold() if threshold is None else threshold
    note = (
        RETRIEVAL_NOTE.format(entry=hit.entry_id, margin=found.margin, score=hit.score) + f" (threshold {limit:.2f}): {hit.example[:200]}"
    )
    if found.margin < limit:
        return [], [note + "; below the threshold: not proposed"]
    finding = Finding(
        entry_id=hit.entry_id,
        signature=RETRIEVED,
        role="initiating",
        weight=hit.score,
        rank=line.rank,
        host=line.host,
        timestamp=line.timestamp,
        order=0,
        evidence=line,
    )
    return [Scored(hit.entry_id, RETRIEVED_SCORE, [finding], notes=[note])], []


def is_retrieved(candidate: Scored) -> bool:
    """True when the candidate is the retrieval fallback's proposal."""
    return any(f.signature == RETRIEVED for f in candidate.findings)


def when_nothing_found(log: ParsedLog, entries: dict[str, Entry], index: KBIndex | None) -> tuple[list[Scored], list[str]]:
    """Candidates when the signatures found none (teardown only, then retrieval), and notes for an ``unknown``."""
    named = named_stop(log) or teardown_only(log, entries)
    stopped = stops(log)
    notes = [STOPPED_NOTE.format(file=stopped[0].source, line=stopped[0].line)] if stopped else []
    if named or index is None:
        return named, notes
    proposed, more = retrieved(log, index)
    return proposed, notes + more
