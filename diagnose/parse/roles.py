"""Causal roles of events: initiating, cascade, teardown or noise.

An event takes the strongest role of the encyclopedia findings on its lines (initiating beats
cascade beats teardown beats noise); an event no entry recognises takes its kind's default.
"""

from __future__ import annotations

from diagnose.parse.parsed_log import ParsedLog
from diagnose.schema import ROLE_ORDER, Role

DEFAULT_ROLE: dict[str, Role] = {
    "traceback": "initiating",
    "watchdog": "cascade",
    "watchdog_status": "cascade",
    "dump_first": "cascade",
    "dump_observed": "cascade",
    "dump_from_rank": "cascade",
    "lagging": "cascade",
    "agent_failed": "teardown",
    "signal": "teardown",
    "error_line": "noise",
}


def assign_roles(log: ParsedLog) -> None:
    """Set every event's role in place."""
    by_line: dict[tuple[str, int], Role] = {}
    for finding in log.findings:
        key = (finding.evidence.source, finding.evidence.line)
        current = by_line.get(key)
        if current is None or ROLE_ORDER[finding.role] < ROLE_ORDER[current]:
            by_line[key] = finding.role
    for event in log.events:
        roles = [by_line[(line.source, line.line)] for line in event.lines if (line.source, line.line) in by_line]
        event.role = min(roles, key=ROLE_ORDER.__getitem__) if roles else DEFAULT_ROLE.get(event.kind, "noise")
