"""Local ranks made global: the launcher's facts place a node's local ranks, else a run on one node has no other.

A logger that names only the local rank (OLMo's and Dolma's ``%(hostname)s:%(local_rank)s`` column) and a bare exception
line such a logger records again on the next line get their global rank here.
"""

from __future__ import annotations

import re

from diagnose.parse.parsed_log import ParsedLog
from diagnose.parse.prefixes import body_of, split_prefix_local
from diagnose.schema import Finding, LogLine

_MESSAGE = re.compile(r"^[\w.]*(?:Error|Exception): (\S.*)")
"""A bare exception line's message (``torch.OutOfMemoryError: CUDA out of memory...``), as a logger may repeat it."""
_ECHO_CHARS = 60


def single_node(log: ParsedLog) -> bool:
    """One host: the ranks' hosts and the failure records' hosts."""
    return len(set(log.hosts.values()) | {r["host"] for r in log.failure_records if r.get("host")}) <= 1


def global_rank(log: ParsedLog, source: str, local_rank: int) -> int | None:
    """The global rank of a local rank in one source: the agent's global_ranks, node_rank x nproc, or one node."""
    facts = log.launch.get(source, {})
    if facts.get("global_ranks"):
        ranks = [int(r) for r in facts["global_ranks"].split(",") if r]
        return ranks[local_rank] if local_rank < len(ranks) else None
    if facts.get("node_rank") and facts.get("nproc"):
        return int(facts["node_rank"]) * int(facts["nproc"]) + local_rank
    return local_rank if single_node(log) else None


def logged_rank(log: ParsedLog, line: LogLine) -> int | None:
    """The global rank of a line whose logger names only its local rank (OLMo's ``host:3`` column); the launcher's facts
    place it, else one node: no other host's logger lines among the findings."""
    return _placed(log, line.source, line.local_rank, line.host) if line.local_rank is not None else None


def _placed(log: ParsedLog, source: str, local_rank: int, host: str | None) -> int | None:
    facts = log.launch.get(source, {})
    placed = facts.get("global_ranks") or (facts.get("node_rank") and facts.get("nproc"))
    logger_hosts = {f.evidence.host for f in log.findings if f.evidence.local_rank is not None} | {host}
    return global_rank(log, source, local_rank) if placed or len(logger_hosts) == 1 else None


def echoed_rank(log: ParsedLog, finding: Finding) -> int | None:
    """The rank of a bare exception line that a logger records again on the next line (OLMo's excepthook logs
    ``Uncaught OutOfMemoryError: CUDA out of memory...`` after Python printed it): the record's prefix names the process."""
    line = finding.evidence
    message = _MESSAGE.search(body_of(line.text))  # under the same stamps or quote markers as its record
    following = log.line_after(line) if message and line.rank is None else None
    if following is None or message is None:
        return None
    rank, local_rank, host, body = split_prefix_local(following)
    if message.group(1)[:_ECHO_CHARS] not in body:
        return None
    if rank is not None:
        return rank
    return _placed(log, line.source, local_rank, host) if local_rank is not None else None
