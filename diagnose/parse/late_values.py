"""Values a redactor learned late: streaming masks a value from the moment a recognizer finds it
(``/home/dfischer`` on line 900), so text kept before that (a bare ``dfischer`` on line 12) is swept once more."""

from __future__ import annotations

from collections.abc import Callable

from diagnose.parse.parsed_log import ParsedLog


def sweep_late_values(log: ParsedLog, sweep: Callable[[str], str]) -> None:
    """Mask, in everything ``log`` kept (names, lines, findings, events, records), the values ``sweep`` knows now."""
    names = {name: sweep(name) for name in log.sources}
    log.sources = [names[name] for name in log.sources]
    log.lines = {names[name]: sweep("\n".join(lines)).split("\n") for name, lines in log.lines.items()}
    kept = [*log.excerpts, *(f.evidence for f in log.findings), *(line for e in log.events for line in e.lines)]
    for line in {id(line): line for line in kept}.values():
        line.text, line.source = sweep(line.text), names.get(line.source, line.source)
        line.host = sweep(line.host) if line.host else None
    for finding in log.findings:
        finding.host = sweep(finding.host) if finding.host else None
    for event in log.events:
        event.message = sweep(event.message) if event.message else event.message
        event.host = sweep(event.host) if event.host else None
        event.fields = {key: sweep(value) for key, value in event.fields.items()}
    log.failure_records = [{key: sweep(value) for key, value in r.items()} for r in log.failure_records]
    log.hosts = {rank: sweep(host) for rank, host in log.hosts.items()}
    log.launch = {names.get(name, name): facts for name, facts in log.launch.items()}
    log.rank_hints = {names.get(name, name): rank for name, rank in log.rank_hints.items()}
