"""Build the Diagnosis (the JSON contract) from the chosen candidate, the log and the entry.

Text (title, mechanism, fix, verify, next run) comes from the encyclopedia entry;
ranks, hosts, evidence and collateral come from the log.
"""

from __future__ import annotations

import re

from diagnose.encyclopedia.entries import Entry
from diagnose.engine.attribution import attribute_rank, launcher_rank, reported_root_rank
from diagnose.engine.candidates import Scored, chronological
from diagnose.engine.chains import exceptions
from diagnose.engine.hang_models import HangVerdict
from diagnose.engine.lookup_lines import failure_lines
from diagnose.engine.terminal import fatal_and_survived, recovered
from diagnose.engine.unexplained import raised_before_exit
from diagnose.parse.lines import make_line
from diagnose.parse.parsed_log import ParsedLog
from diagnose.parse.prefixes import body_of
from diagnose.schema import (
    Candidate,
    Collateral,
    Diagnosis,
    Event,
    Evidence,
    LogLine,
    RootCause,
)

MAX_EVIDENCE = 8
UNKNOWN_ENTRY = "unknown"
_NUMBER = re.compile(r"\d+")
PROGRAM_ERROR_ENTRY = "program-error"
"""What an ``unknown`` says when a process printed an exception of its own that no entry knows."""


def _evidence(lines: list[LogLine]) -> list[Evidence]:
    seen: set[tuple[str, int]] = set()
    out: list[Evidence] = []
    for line in lines:
        key = (line.source, line.line)
        if key not in seen:
            seen.add(key)
            out.append(Evidence(file=line.source, line=line.line, rank=line.rank, text=line.text))
    return out[:MAX_EVIDENCE]


NCCL_BLOCK = re.compile(r"\bNCCL error(?: in: |: )|^\s*nccl(?:[A-Z]\w*Error|InvalidUsage|InvalidArgument): |^\s*Last error:")
"""c10d's report of a failed NCCL call, one piece per line: ``DistBackendError: NCCL error in: ..., <reason>, NCCL
version``, ``ncclInvalidUsage: This usually reflects ...``, ``Last error:`` and NCCL's own WARN text under it."""
BLOCK_SPAN = 6
"""How far around the root cause's line the report's pieces are looked for (pastes add blank lines between them)."""


def _nccl_block(log: ParsedLog, line: LogLine) -> list[LogLine]:
    """The lines of a c10d NCCL error report around the line (the error class and the reason NCCL gave), if any."""
    out: list[LogLine] = []
    for step in (*range(-BLOCK_SPAN, 0), *range(1, BLOCK_SPAN + 1)):
        text = log.line_text(line.source, line.line + step)
        if text is not None and NCCL_BLOCK.search(body_of(text)):
            out.append(make_line(line.source, line.line + step, text))
    return out


def _traceback_for(log: ParsedLog, line: LogLine) -> Event | None:
    """The traceback the line belongs to, or whose exception's message (a wrapped error) it continues."""
    for event in log.events:
        if event.kind == "traceback" and any((kept.source, kept.line) == (line.source, line.line) for kept in event.lines):
            return event
    streams = exceptions(log)
    for raised in streams.get((line.source, line.rank), []) + streams.get((line.source, None), []):
        for event in raised.events:
            span = raised.wraps.get(event.lines[-1].line)
            if span is not None and span[0] <= line.line <= span[1]:
                return event
    return None


def collateral_groups(log: ParsedLog, entries: dict[str, Entry], root_id: str, hang: HangVerdict | None) -> list[Collateral]:
    """Cascade and teardown findings grouped by entry, plus later initiating failures of other entries."""
    out: list[Collateral] = []
    root_lines = {(f.evidence.source, f.evidence.line) for f in log.findings if f.entry_id == root_id}
    for group in sorted(log.groups, key=lambda g: g.first_order):
        if group.role == "noise" or (group.entry_id == root_id and group.role == "initiating"):
            continue
        lines = {(f.evidence.source, f.evidence.line) for f in log.findings if (f.entry_id, f.role) == (group.entry_id, group.role)}
        if group.role == "initiating" and lines and lines <= root_lines:
            continue  # another reading of the root cause's own lines (a special case set aside), not a later failure
        entry = entries.get(group.entry_id)
        title = entry.title if entry else group.entry_id
        if group.entry_id == "nccl-timeout-hang" and hang is not None and hang.summary:
            summary = hang.summary
        elif group.role == "initiating" and root_id == UNKNOWN_ENTRY:
            summary = f"also seen: {title} ({group.count} line(s)); not the root cause (survived, or after an error no entry knows)"
        elif group.role == "initiating":
            summary = f"later: {title} ({group.count} line(s)); after the root cause, not its origin"
        else:
            summary = f"{title}: {group.count} line(s) on {len(group.ranks) or 'no'} rank(s) ({group.role})"
        out.append(Collateral(id=group.entry_id, ranks=group.ranks, count=group.count, summary=summary))
    return out


def build_diagnosis(
    log: ParsedLog,
    ranked: list[Scored],
    entries: dict[str, Entry],
    hang: HangVerdict | None,
    confidence: float,
    unknown_notes: list[str] | None = None,
) -> Diagnosis:
    """The rules' diagnosis: the best candidate, or ``unknown`` with the most suspicious lines (and ``unknown_notes``)."""
    candidates = [Candidate(id=s.entry_id, score=s.score) for s in ranked]
    if not ranked:
        return unknown_diagnosis(log, entries, hang, unknown_notes)
    best = ranked[0]
    entry = entries[best.entry_id]
    findings = chronological(best.findings)
    fatal, survived = fatal_and_survived(log, [f for f in findings if f.role == "initiating"])
    lived = {id(f) for f in survived if recovered(log, f)}
    if fatal and lived:  # a retried or warned-and-survived line is not where the failure started
        findings = [f for f in findings if id(f) not in lived] + [f for f in findings if id(f) in lived]
    lines = [f.evidence for f in findings]
    rank = attribute_rank(log, findings[0]) if findings else None
    # the first line names no rank; the failure is reported with one rank only, by the failing rank's own lines or by
    # messages naming it (a stall report's "missing ranks: 815" printed by a healthy rank)
    named = {f.rank for f in findings if f.rank is not None and (f.role == "initiating" or f.rank_named)}
    if rank is None and len(named) == 1:
        rank = named.pop()
    if findings and all(f.role == "teardown" for f in findings):  # only the launcher spoke: its blame decides
        blamed = launcher_rank(log)
        rank = blamed if blamed is not None else rank
    host = findings[0].host if findings else None
    notes: list[str] = list(best.notes)
    hang_reasoning: str | None = None
    if hang is not None and (not findings or all(f.role == "cascade" for f in findings)):
        rank = hang.rank
        host = log.hosts.get(rank) if rank is not None else None
        lines = [line for event in hang.evidence for line in event.lines] + lines
        hang_reasoning = hang.reason
        notes.append(f"hang reasoning: {hang.reason}")
    if findings:
        traceback = _traceback_for(log, findings[0].evidence)
        if traceback is not None:
            lines = [traceback.anchor, *lines]
        lines += _nccl_block(log, findings[0].evidence)
    if host is None and rank is not None:
        host = log.hosts.get(rank)
    return Diagnosis(
        root_cause=RootCause(id=entry.id, title=entry.title, confidence=confidence),
        candidates=candidates,
        initiating_rank=rank,
        initiating_host=host,
        evidence=_evidence(lines),
        collateral=collateral_groups(log, entries, entry.id, hang),
        mechanism=entry.mechanism,
        fix=entry.fix,
        verify=entry.verify,
        redactions=log.redactions,
        next_run=entry.next_run,
        notes=notes + log.notes,
        hang_reasoning=hang_reasoning,
    )


def _shape(text: str) -> str:
    """An exception line without its prefixes and numbers (a rank's own index in its message, sizes)."""
    return _NUMBER.sub("N", body_of(text).strip())


def unknown_diagnosis(log: ParsedLog, entries: dict[str, Entry], hang: HangVerdict | None, notes: list[str] | None = None) -> Diagnosis:
    """No known failure: show the most suspicious lines and what to turn on next time; when a process printed an
    exception of its own, that exception leads and the mechanism and fix are the program-error entry's. A log with no
    exception, error line or signal shows its lines that say something failed (``failure_lines``: an NCCL ``WARN``,
    a scheduler's sentence), the ones retrieval looked up."""
    suspicious = [e for e in log.events if e.kind in ("traceback", "error_line", "signal", "agent_failed")]
    tracebacks = [e for e in suspicious if e.kind == "traceback"]
    first = (tracebacks or suspicious)[:1]
    entry = entries.get(UNKNOWN_ENTRY)
    own = next(raised_before_exit(log), None)
    text = (entries.get(PROGRAM_ERROR_ENTRY) if own is not None else None) or entry
    lines = ([own] if own is not None else []) + [e.anchor for e in (tracebacks + suspicious)] or failure_lines(log)
    # the first exception's rank, else the rank the launcher blames (its root-cause report, the first rank to exit);
    # when several ranks raised that same exception the program failed alike everywhere: the order their tracebacks were
    # printed in proves nothing, only the launcher's record of the first failure it observed names a rank
    rank = first[0].rank if first and first[0].rank is not None else launcher_rank(log)
    alike = sorted({e.rank for e in tracebacks if e.rank is not None and _shape(e.anchor.text) == _shape(first[0].anchor.text)})
    if len(alike) > 1:
        rank = reported_root_rank(log)
        reported = f"; the launcher observed rank {rank} fail first" if rank is not None else ": no rank went first"
        notes = [*(notes or []), f"ranks {', '.join(map(str, alike))} raised the same exception{reported}"]
    return Diagnosis(
        root_cause=RootCause(id="unknown", title=entry.title if entry else "No known failure found", confidence=0.0),
        candidates=[],
        initiating_rank=rank,
        initiating_host=first[0].host if first and first[0].rank == rank else log.hosts.get(rank) if rank is not None else None,
        evidence=_evidence(lines),
        collateral=collateral_groups(log, entries, UNKNOWN_ENTRY, hang),
        mechanism=text.mechanism if text else "",
        fix=text.fix if text else [],
        verify=text.verify if text else [],
        redactions=log.redactions,
        next_run=text.next_run if text else [],
        notes=[*(notes or []), *log.notes],
    )
