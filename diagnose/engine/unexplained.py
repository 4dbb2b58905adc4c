"""A process's own exception that no entry knows, printed before the consequences the signatures did recognise.

When the only findings are consequences (``cascade``: watchdog timeouts, peers closing the connection, a barrier
naming the rank it waited for) and a process printed an exception of its own before the first of them, an
exception no signature explains, that exception is the likelier start: the run is ``unknown`` (its lines shown, its
rank the initiating one), not the consequence's entry. A launcher's report of its workers is not a process's own
exception. Lines in another file count as before only by their clocks (``CLOCK_TOLERANCE`` earlier).

A process's own exception is a traceback's, or an exception line right under a traceback's indented frame or
source line whose ``Traceback (most recent call last):`` header the excerpt cut off. When the launcher reports a
worker that exited on an uncaught exception (exit code 1, or a ``ChildFailedError`` naming no other), a bare
exception line printed before that report is what it died of too (``raised_before_exit``): the teardown alone is then not the whole story.
"""

from __future__ import annotations

import re
from collections.abc import Iterator

from diagnose.engine.chains import EXCEPTION_LINE
from diagnose.engine.terminal import CLOCK_TOLERANCE
from diagnose.parse.events import LAUNCHER_EXCEPTION
from diagnose.parse.parsed_log import ParsedLog
from diagnose.parse.prefixes import body_of
from diagnose.schema import LogLine


def _under_frames(log: ParsedLog, line: LogLine) -> bool:
    """True when the line is an exception's, right under an indented line of a traceback (a frame or its source)."""
    above = log.lines_above(line, 1)
    return bool(EXCEPTION_LINE.match(body_of(line.text).strip())) and bool(above) and body_of(above[0]).startswith("  ")


def own_exceptions(log: ParsedLog) -> Iterator[LogLine]:
    """The exception lines processes printed of their own (see the module docstring) that no finding explains: not a
    launcher's reports, not a consequence a signature knows (Horovod's "has been shut down" after another rank's)."""
    explained = {(f.evidence.source, f.evidence.line) for f in log.findings}
    for event in log.events:
        line = event.anchor
        if LAUNCHER_EXCEPTION.search(line.text) or (line.source, line.line) in explained:
            continue
        if event.kind == "traceback" or (event.kind == "error_line" and _under_frames(log, line)):
            yield line


_CHILD_FAILED = re.compile(r"\bChildFailedError\b")
RAISED_EXIT = "1"
"""The exit code of a Python process that ended on an uncaught exception (what torchrun reports as ``exitcode: 1``)."""


def _raised_reports(log: ParsedLog) -> list[LogLine]:
    """The launcher's lines reporting a worker that exited on an uncaught exception: ``failed (exitcode: 1)``, and its
    ``ChildFailedError`` when its report names no other exit code (or the excerpt ends before it names one)."""
    reports = [e.anchor for e in log.events if e.kind == "agent_failed" and e.fields.get("exitcode") == RAISED_EXIT]
    if {r["exitcode"] for r in log.failure_records if r.get("exitcode")} <= {RAISED_EXIT}:
        reports += [e.anchor for e in log.events if e.kind in ("traceback", "error_line") and _CHILD_FAILED.search(e.anchor.text)]
    return reports


def raised_before_exit(log: ParsedLog) -> Iterator[LogLine]:
    """The process's own exceptions, and bare exception lines (``ValueError: ...`` with no traceback above it in the
    excerpt) printed before the launcher reported a worker exiting on an uncaught exception: what it died of."""
    yield from own_exceptions(log)
    reports = _raised_reports(log)
    if not reports:
        return
    explained = {(f.evidence.source, f.evidence.line) for f in log.findings}
    for event in log.events:
        line = event.anchor
        if event.kind != "error_line" or (line.source, line.line) in explained or LAUNCHER_EXCEPTION.search(line.text):
            continue
        if EXCEPTION_LINE.match(body_of(line.text).strip()) and any(comes_before(line, report) for report in reports):
            yield line


def comes_before(line: LogLine, other: LogLine) -> bool:
    """True when ``line`` provably comes first: earlier in the same file, or earlier by the clocks."""
    if line.source == other.source:
        return line.line < other.line
    return line.timestamp is not None and other.timestamp is not None and line.timestamp < other.timestamp - CLOCK_TOLERANCE


def unexplained_before(log: ParsedLog, consequences: list[LogLine]) -> LogLine | None:
    """The first exception line no finding explains that comes before every one of ``consequences``, else None."""
    if not consequences:
        return None
    for line in own_exceptions(log):
        if all(comes_before(line, later) for later in consequences):
            return line
    return None


CODE_ERRORS = frozenset({"AttributeError", "NameError", "KeyError", "TypeError", "IndexError", "UnboundLocalError"})
"""Python's errors of a program's own code: a warning the library printed long before (and fell back from) did not make them."""


def code_error_after(log: ParsedLog, survived: list[LogLine]) -> LogLine | None:
    """The exception line of the last traceback when no finding explains it, it is a coding error (CODE_ERRORS) and it
    comes after every one of ``survived`` (warnings the process lived past), else None."""
    tracebacks = [e for e in log.events if e.kind == "traceback" and not LAUNCHER_EXCEPTION.search(e.anchor.text)]
    if not tracebacks or not survived:
        return None
    last = tracebacks[-1]
    explained = any(f.evidence.source == last.anchor.source and f.evidence.line == last.anchor.line for f in log.findings)
    if explained or (last.exception_type or "").rsplit(".", 1)[-1] not in CODE_ERRORS:
        return None
    return last.anchor if all(comes_before(earlier, last.anchor) for earlier in survived) else None
