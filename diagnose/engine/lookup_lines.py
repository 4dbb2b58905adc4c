"""Which lines of a log the retrieval fallback looks up: its error lines, else the lines that say something failed.

An error line is a traceback's last line or an exception-shaped line (the reader's ``traceback`` and ``error_line``
events). Short excerpts that users paste often have none: an NCCL ``WARN``, a ``Killed``, a launcher's or a
scheduler's sentence are how the failure shows. When a log has no error line, its kept lines (the whole log when it is
small, else the reader's excerpts around events) that carry a failure word are looked up instead: the last
``MAX_LINES`` of them, among each file's last ``TAIL_LINES``, where the ending is. Python's own warnings
(``FutureWarning: ...`` and the ``warnings.warn(`` line under it) are left out: a healthy run prints them too; so are
NCCL's ``INFO`` lines, a traceback's header, settings (``NCCL_DEBUG=WARN``) and a value's name (``number of nan
iterations: 0``: ``nan`` is no failure word).
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

from diagnose.engine.terminal import after_stop, stops
from diagnose.parse.lines import make_line
from diagnose.parse.prefixes import body_of
from diagnose.schema import LogLine

if TYPE_CHECKING:
    from collections.abc import Iterable, Iterator

    from diagnose.parse.parsed_log import ParsedLog

MAX_LINES = 20
TAIL_LINES = 5_000
"""How many of a file's last kept lines are searched for failure words (the scan is bounded on a long log)."""
_BARE_HEADER = re.compile(r"\s*(?:[a-z]+\s*:\s*)?Traceback \(most recent call last\):?\s*$")
"""A traceback cut before its exception line may end on a header (its own or the next one's, behind a ``stderr:`` or
torchrun's ``traceback :`` field): no message to look up."""
FAILURE_WORD = re.compile(
    r"\b(?:errors?|fail(?:s|ed|ure|ing)?|fatal|killed|timed? ?out|timeout|abort(?:s|ed|ing)?|exceptions?|unable|cannot"
    r"|can'?t|could ?n[o']t|denied|refused|unreachable|no route|no such|not found|invalid|warn(?:ing)?|panic|segmentation"
    r"|signal|oom|out of memory|corrupt(?:ed|ion)?|mismatch(?:ed)?|overflow|exit(?:ed)? (?:with )?(?:code|status)"
    r"|exitcode|terminat(?:e|ed|ing)|hung|hangs?|stuck|crash(?:ed|es)?|preempt(?:ed|ion)?|cancell?ed|unhandled|illegal"
    r"|insufficient|exceeded|disconnect(?:ed)?|lost|closed)\b",
    re.IGNORECASE,
)
"""A word saying that something went wrong (a line with one is looked up when the log has no error line)."""
NOT_A_FAILURE = re.compile(r"\bNCCL INFO\b|\b[A-Z]\w*Warning:|\bwarnings\.warn\(|Traceback \(most recent call last\)")
"""NCCL's INFO lines (its failures are WARN), Python's own warnings, and a traceback's header (its exception line, when
there is one, is an error line)."""
SETTING = re.compile(r"\b\w+=\S*")
"""``NCCL_DEBUG=WARN``, ``on_error=abort``: a setting names a word without saying it happened."""


def _indent(line: LogLine) -> int:
    body = body_of(line.text)
    return len(body) - len(body.lstrip())


def _cut_in_frames(traceback: list[LogLine]) -> bool:
    """A traceback cut inside its frames: it ends on a ``File ...`` line or a frame's code, indented deeper than its
    header, where the exception line would be as deep as the header. Something failed, but there is no message to look up."""
    header, last = traceback[0], traceback[-1]
    return last is not header and _indent(last) > _indent(header)


def _explained(log: ParsedLog, known: Iterable[str] | None) -> set[tuple[str, int]]:
    """The lines a finding of a ``known`` signature pattern explains (none when ``known`` is None)."""
    if known is None:
        return set()
    patterns = set(known)
    return {(f.evidence.source, f.evidence.line) for f in log.findings if f.signature in patterns}


def error_lines(log: ParsedLog, known: Iterable[str] | None = None) -> list[LogLine]:
    """The error-like lines before any person's stop, tracebacks' last lines first.

    ``known`` (for retrieval): the signature patterns still known; a line one of the log's findings of those explains
    (a launcher's teardown, a cascade) is then left out, for retrieval looks for wording no signature knows, and so is a
    traceback cut inside its frames (no message to look up; still an error that happened, for ``named_stop``).
    """
    stopped = stops(log)  # what follows a person's stop is its consequence; signals are how processes were stopped
    explained = _explained(log, known)
    events = [
        e
        for e in log.events
        if e.kind in ("traceback", "error_line") and not after_stop(e.anchor, stopped) and (e.anchor.source, e.anchor.line) not in explained
    ]
    tracebacks = [
        e.anchor
        for e in events
        if e.kind == "traceback" and not _BARE_HEADER.match(body_of(e.anchor.text)) and not (known is not None and _cut_in_frames(e.lines))
    ]
    seen: dict[str, LogLine] = {}
    for line in [*tracebacks[::-1], *(e.anchor for e in events if e.kind != "traceback")]:
        seen.setdefault(line.text.strip(), line)
    return list(seen.values())[:MAX_LINES]


def _tail_with_failure_word(log: ParsedLog) -> Iterator[LogLine]:
    """The last ``TAIL_LINES`` kept lines of each file (the whole log when it is small, else the reader's excerpts
    around events) that carry a failure word: the ending is where the failure is, and the scan stays bounded."""
    if log.lines:
        for source, texts in log.lines.items():
            first = max(0, len(texts) - TAIL_LINES)
            for number, text in enumerate(texts[first:], first + 1):
                if FAILURE_WORD.search(text):
                    yield make_line(source, number, text, rank_hint=log.rank_hints.get(source))
    else:
        yield from (line for line in log.excerpts[-TAIL_LINES:] if FAILURE_WORD.search(line.text))


def failure_lines(log: ParsedLog, known: Iterable[str] | None = None) -> list[LogLine]:
    """The kept lines near the end before any person's stop that carry a failure word (outside a setting), no ``known``
    finding explains, and ``NOT_A_FAILURE`` does not name: the last ``MAX_LINES`` distinct ones."""
    stopped = stops(log)
    explained = _explained(log, known)
    seen: dict[str, LogLine] = {}
    for line in _tail_with_failure_word(log):
        body = body_of(line.text)
        if (line.source, line.line) in explained or not FAILURE_WORD.search(SETTING.sub(" ", body)) or NOT_A_FAILURE.search(body):
            continue
        if not after_stop(line, stopped):
            seen.pop(body.strip(), None)
            seen[body.strip()] = line
    return list(seen.values())[-MAX_LINES:]


def lookup_lines(log: ParsedLog, known: Iterable[str] | None = None) -> list[LogLine]:
    """What retrieval looks up: the error lines, else the failure lines."""
    patterns = None if known is None else set(known)  # read twice: a one-shot iterable would be empty the second time
    return error_lines(log, patterns) or failure_lines(log, patterns)
