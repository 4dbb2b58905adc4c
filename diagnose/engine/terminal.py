"""What ended the process, and what it survived.

A failure line that the process lived past is not what killed it: an exception in an earlier traceback
of the same rank, followed by a later one (a retried or handled error); a Python warning (``file.py:12:
UserWarning: ...``), which by construction does not raise; a line a logger wrote at WARNING level; a line
followed closely by the library saying it falls back or retries. When some initiating finding sits in the
exception that ended its process (the last traceback of its rank), such survived findings must not outrank it,
whatever their order.
"""

from __future__ import annotations

import re
from collections import defaultdict

from diagnose.parse.parsed_log import ParsedLog
from diagnose.schema import Event, Finding

PYTHON_WARNING = re.compile(r"\.py:\d+: (?:\w+\.)*\w*Warning:")
"""The ``warnings`` module's format: what it reports did not raise."""
LOGGED_WARNING = re.compile(r"\[WARNING\]|^\s*WARNING:[\w.]*:| - WARNING - |(?:^|\]:)\[?W\d{3,4} \d\d:\d\d:\d\d")
"""Python ``logging`` at WARNING level (DeepSpeed's ``[WARNING]``, the default ``WARNING:name:``, `` - WARNING - ``)
or glog/c10 at W (``[W204 07:30:03 socket.cpp:752]``): the program logged it and went on."""
RECOVERED = re.compile(
    r"\bfall(?:ing)?[ -]?back\b|\bfalls back\b|\bwill (?:be )?retr(?:y|ied)\b|\bretrying\b|\bRetry(?:ing)? in\b"
    r"|\bcontinuing without\b|\bskipping (?:it|this)\b",
    re.I,
)
"""The library saying the error was handled."""
RECOVERY_WINDOW = 3
"""How many following lines of the same file may say the error was handled."""


def _streams(log: ParsedLog) -> dict[tuple[str, int | None], list[Event]]:
    streams: dict[tuple[str, int | None], list[Event]] = defaultdict(list)
    for event in log.events:
        if event.kind == "traceback":
            streams[(event.lines[0].source, event.rank)].append(event)
    for events in streams.values():
        events.sort(key=lambda e: e.lines[0].line)
    return streams


def _inside(finding: Finding, event: Event) -> bool:
    line = finding.evidence
    first, last = event.lines[0], event.lines[-1]
    same_rank = finding.rank is None or event.rank is None or finding.rank == event.rank
    return line.source == first.source and first.line <= line.line <= last.line and same_rank


def recovered(log: ParsedLog, finding: Finding) -> bool:
    """True when the finding is a warning or the library says, right after it, that it retried or fell back."""
    line = finding.evidence
    if PYTHON_WARNING.search(line.text) or LOGGED_WARNING.search(line.text):
        return True
    following = (log.line_text(line.source, line.line + step) for step in range(0, RECOVERY_WINDOW + 1))
    return any(text is not None and RECOVERED.search(text) for text in following)


def fatal_and_survived(log: ParsedLog, findings: list[Finding]) -> tuple[list[Finding], list[Finding]]:
    """(findings in the exception that ended their process, findings their process lived past)."""
    streams = _streams(log)
    fatal: list[Finding] = []
    survived: list[Finding] = []
    for finding in findings:
        events = streams.get((finding.evidence.source, finding.rank)) or streams.get((finding.evidence.source, None)) or []
        holding = [i for i, event in enumerate(events) if _inside(finding, event)]
        if holding and holding[-1] == len(events) - 1:
            fatal.append(finding)
        elif holding or recovered(log, finding):
            survived.append(finding)
    return fatal, survived
