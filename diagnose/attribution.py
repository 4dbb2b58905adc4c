"""Which rank a failure belongs to when its own line does not say.

Kernel and scheduler lines name a pid or a host, launcher summaries name ranks with their pids
and exit codes. In order: the line's own rank prefix; a pid the ChildFailedError report (or the
agent's "failed ... local_rank: N (pid: P)" on a single node) ties to a rank; the first troubled
rank on the line's host; the rank the launcher saw exit with an exception (a positive exit code,
where signals mark victims), preferring the report in the same file.
"""

from __future__ import annotations

import re

from diagnose.candidates import chronological
from diagnose.parse.model import ParsedLog
from diagnose.schema import Finding

# SIGABRT (the NCCL watchdog), SIGTERM (the launcher), SIGINT (a person): usually victims, not causes
VICTIM_EXITS = {-6, -15, -2, 134, 143, 130}
_PID = re.compile(r"(?:\bpid[=: ]\s*|Killed process |PID )(\d+)", re.I)


def pid_ranks(log: ParsedLog) -> dict[int, int]:
    """pid -> global rank: from ranked lines that name a pid, and from the launcher's reports."""
    ranks: dict[int, int] = {}
    for finding in log.findings:
        named = _PID.search(finding.evidence.text) if finding.rank is not None else None
        if named and finding.rank is not None:
            ranks.setdefault(int(named.group(1)), finding.rank)
    for record in log.failure_records:
        if record.get("pid", "").isdigit() and record.get("rank", "").isdigit():
            ranks[int(record["pid"])] = int(record["rank"])
    if _single_node(log):
        for event in log.events:
            if event.kind == "agent_failed" and event.fields.get("pid") and event.fields.get("local_rank"):
                ranks.setdefault(int(event.fields["pid"]), int(event.fields["local_rank"]))
    return ranks


def _single_node(log: ParsedLog) -> bool:
    return len(set(log.hosts.values()) | {r["host"] for r in log.failure_records if r.get("host")}) <= 1


def rank_on_host(log: ParsedLog, host: str | None) -> int | None:
    """The first rank on ``host`` that shows trouble, else its lowest rank."""
    if host is None:
        return None
    ranks = sorted(rank for rank, h in log.hosts.items() if h == host)
    if not ranks:
        return None
    troubled = chronological([f for f in log.findings if f.role != "noise" and f.rank in ranks])
    return troubled[0].rank if troubled else ranks[0]


def _exits(log: ParsedLog) -> list[tuple[int, int, str, str]]:
    """(rank, exit code, source, time) of every process the launcher reported, records first."""
    exits = [(int(r["rank"]), int(r["exitcode"]), r.get("source", ""), r.get("time", "")) for r in log.failure_records
             if r.get("rank", "").isdigit() and r.get("exitcode", "").lstrip("-").isdigit()]
    if _single_node(log):
        exits += [(int(e.fields["local_rank"]), int(e.fields["exitcode"]), e.lines[0].source, "") for e in log.events
                  if e.kind == "agent_failed" and e.fields.get("local_rank") and e.fields.get("exitcode", "").lstrip("-").isdigit()]
    return exits


def _raised(log: ParsedLog, source: str) -> int | None:
    """The rank that exited on its own: an exception or a crash signal, not a teardown signal."""
    raised = [x for x in _exits(log) if x[1] != 0 and x[1] not in VICTIM_EXITS]
    same_file = [x for x in raised if x[2] == source]
    chosen = sorted(same_file or raised, key=lambda x: x[3])
    return chosen[0][0] if chosen else None


def attribute_rank(log: ParsedLog, finding: Finding) -> int | None:
    """The rank a finding belongs to (None when nothing in the log says)."""
    if finding.rank is not None:
        return finding.rank
    pid = _PID.search(finding.evidence.text)
    if pid:
        by_pid = pid_ranks(log).get(int(pid.group(1)))
        if by_pid is not None:
            return by_pid
    on_host = rank_on_host(log, finding.host)
    if on_host is not None:
        return on_host
    return _raised(log, finding.evidence.source)
