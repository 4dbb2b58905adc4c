"""What a launcher's failure records say about ranks: the record's host is its rank's, and so is the traceback it copied.

torchelastic's ChildFailedError report prints each failed process as a record (``[0]:``, ``rank : 7 (local_rank:
7)``, ``traceback : Traceback ...``) and copies into it the traceback that process wrote to its error file. The
copied lines carry no rank prefix of their own: the record says whose they are. The record's own fields (its exit
code, its signal) stay the launcher's report, read as such by ``diagnose.engine.attribution``.
"""

from __future__ import annotations

from diagnose.parse.parsed_log import ParsedLog
from diagnose.schema import LogLine

Span = tuple[str, int, int, int]
"""(source, first line, last line, rank) of the traceback one record copied."""


def _spans(log: ParsedLog) -> list[Span]:
    return [
        (record["source"], int(record["copied_from"]), int(record["last"]), int(record["rank"]))
        for record in log.failure_records
        if record.get("rank", "").isdigit() and record.get("copied_from") and record.get("source")
    ]


def _owner(line: LogLine, spans: list[Span]) -> int | None:
    return next((rank for source, first, last, rank in spans if line.source == source and first <= line.line <= last), None)


def read_failure_records(log: ParsedLog) -> None:
    """Each record's host becomes its rank's (unless the rank's own lines named one); each finding and event inside a
    record's copied traceback that names no rank of its own gets the record's rank, as do the finding's group and the
    log's ranks."""
    for record in log.failure_records:
        if record.get("rank", "").isdigit() and record.get("host"):
            log.hosts.setdefault(int(record["rank"]), record["host"])
    spans = _spans(log)
    for finding in log.findings:
        rank = _owner(finding.evidence, spans) if finding.rank is None else None
        if rank is not None:
            finding.rank = finding.evidence.rank = rank
            for group in log.groups:
                if (group.entry_id, group.role) == (finding.entry_id, finding.role) and rank not in group.ranks:
                    group.ranks = sorted([*group.ranks, rank])
            log.ranks = sorted({*log.ranks, rank})
    for event in log.events:
        rank = _owner(event.anchor, spans) if event.rank is None else None
        if rank is not None:
            event.rank = rank
            for line in event.lines:
                line.rank = rank if line.rank is None else line.rank
