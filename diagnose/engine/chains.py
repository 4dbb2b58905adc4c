"""One exception as Python printed it: its chained tracebacks and the message lines its exception line continues with.

A wrapper exception yields to the cause it wraps. The cause shows in one of two places:

- a chain: the cause's traceback, then ``The above exception was the direct cause of the following exception:``
  (``raise ... from e``) or ``During handling of the above exception, another exception occurred:``, then the
  wrapper's traceback. Python prints the cause first, so reading order is already the order things happened;
  the tracebacks of one chain are one exception (the last chain of a rank ended it, every link included).
- the wrapper's message: an exception line that announces more (it ends with ``:``), or is followed at once by
  another exception line or a nested traceback, continues on the next lines, up to a blank line, a new
  ``Traceback``, a chain marker, a line of another rank or a new log record (a line that starts with a clock). Those
  lines carry the wrapped error: ``BackendCompilerFailed: backend='inductor' raised:`` then ``RuntimeError: ...``
  and ptxas' own lines; ``Caught OSError in DataLoader worker process 3.`` then ``Original Traceback (most recent
  call last):`` and the worker's traceback; ``DistBackendError: NCCL error ...`` then ``ncclSystemError: ...``,
  ``Last error:`` and NCCL's specific cause. Any other line after an exception line (a launcher's, the kernel's,
  the next output) is not its message. An exception line pasted without its traceback wraps the lines after it only
  when it announces them (ends with ``:``). The wrapped error was raised before its wrapper: ``causes_first`` puts
  the findings on those lines ahead of the wrapper's line.

No list of wrapper types: the shape of the printout decides. Which of the two findings is the root cause is then
the ranking's ordinary rule (the earliest finding at least ``STRONG_FIRST_RATIO`` as specific as the most specific one
wins the earliest-failure bonus): a specific wrapped error beats its wrapper, a weak generic line inside a specific
wrapper does not.
"""

from __future__ import annotations

import re
from collections import defaultdict
from collections.abc import Callable
from dataclasses import dataclass, field

from diagnose.parse.parsed_log import ParsedLog
from diagnose.parse.prefixes import split_prefix
from diagnose.parse.timestamps import YEARLESS, parse_timestamp
from diagnose.schema import Event, Finding

CHAIN_MARKER = re.compile(
    r"^\s*(?:The above exception was the direct cause of the following exception|"
    r"During handling of the above exception, another exception occurred):?\s*$"
)
"""Python's words between the tracebacks of one chain of exceptions."""
ENDS_MESSAGE = ("Traceback (most recent call last)", "The above exception", "During handling of the above exception")
EXCEPTION_LINE = re.compile(r"^(?:[A-Za-z_]\w*\.)*(?:[A-Za-z_]\w*(?:Error|Exception|Failure|Failed|Interrupt)|Error|Exception)(?::|$)")
"""A line that starts with an exception's type, as Python prints it (``ncclSystemError: ...``, ``RuntimeError: ...``)."""
NESTED = "Traceback (most recent call last):"
"""A traceback printed inside a message (``Original Traceback (most recent call last):``)."""
MESSAGE_SPAN = 40
"""How many lines after an exception line may continue its message."""
REMOTE_TRACEBACK = re.compile(r"^(?:\w+\.)*RayTaskError(?:\([\w.]+\))?: ")
"""Ray's exception for a failed remote task (ray/exceptions.py RayTaskError): the task's own traceback follows it, frames
first and the remote exception last, as the message it announces."""
CHAIN_GAP = 4
"""How many lines (blank ones and the marker) may separate two tracebacks of one chain."""
CLOCK_HEAD = 40
"""A line whose first characters hold a clock is a new log record, not the message going on."""


@dataclass
class Raised:
    """One exception as printed: the tracebacks of its chain and the message lines each exception line continues with."""

    source: str
    rank: int | None
    first: int
    last: int
    events: list[Event] = field(default_factory=list)
    wraps: dict[int, tuple[int, int]] = field(default_factory=dict)
    """exception line -> (first, last) line of the message it continues with (the wrapped error), when any."""

    def holds(self, finding: Finding) -> bool:
        """True when the finding's line is one of this exception's lines (its traceback, chain or message)."""
        line = finding.evidence
        same_rank = finding.rank is None or self.rank is None or finding.rank == self.rank
        return line.source == self.source and self.first <= line.line <= self.last and same_rank


def _texts(log: ParsedLog) -> Callable[[str, int], str | None]:
    """Line lookup for the engine: whole kept sources, else the kept excerpts (indexed once)."""
    excerpts: dict[tuple[str, int], str] | None = None

    def text(source: str, line: int) -> str | None:
        nonlocal excerpts
        kept = log.lines.get(source)
        if kept is not None:
            return kept[line - 1] if 0 < line <= len(kept) else None
        if excerpts is None:
            excerpts = {(e.source, e.line): e.text for e in log.excerpts}
        return excerpts.get((source, line))

    return text


def _message_end(text: Callable[[str, int], str | None], source: str, head: int) -> int:
    """The last line that continues the message of the exception line ``head`` (``head`` itself when none does)."""
    head_text = text(source, head)
    if head_text is None:
        return head
    rank, _, head_body = split_prefix(head_text)
    end = head
    announced = head_body.rstrip().endswith(":") or REMOTE_TRACEBACK.match(head_body.lstrip()) is not None
    for number in range(head + 1, head + 1 + MESSAGE_SPAN):
        line = text(source, number)
        if line is None:
            break
        line_rank, _, body = split_prefix(line)
        if line_rank != rank:
            if line_rank is not None and rank is not None:
                continue  # another rank's line, interleaved
            break
        if not body.strip() or body.lstrip().startswith(ENDS_MESSAGE) or parse_timestamp(body[:CLOCK_HEAD], year=YEARLESS) is not None:
            break
        if end == head and not (announced or EXCEPTION_LINE.match(body) or NESTED in body):
            break  # the next line is not the message going on
        end = number
    return end


def _chained(text: Callable[[str, int], str | None], source: str, after: int, start: int) -> bool:
    """True when only blank lines and a chain marker lie between line ``after`` and a traceback starting at ``start``."""
    if not 0 < start - after <= CHAIN_GAP + 1:
        return False
    between = [text(source, n) for n in range(after + 1, start)]
    bodies = [split_prefix(t)[2] if t is not None else None for t in between]
    return any(b is not None and CHAIN_MARKER.match(b) for b in bodies) and all(
        b is not None and (not b.strip() or CHAIN_MARKER.match(b)) for b in bodies
    )


def exceptions(log: ParsedLog) -> dict[tuple[str, int | None], list[Raised]]:
    """Each (source, rank)'s exceptions in reading order: tracebacks joined into chains, with their messages."""
    text = _texts(log)
    streams: dict[tuple[str, int | None], list[Event]] = defaultdict(list)
    for event in log.events:
        if event.kind == "traceback":
            streams[(event.lines[0].source, event.rank)].append(event)
    out: dict[tuple[str, int | None], list[Raised]] = {}
    for (source, rank), events in streams.items():
        raised: list[Raised] = []
        for event in sorted(events, key=lambda e: e.lines[0].line):
            head = event.lines[-1].line
            end = _message_end(text, source, head)
            start = event.lines[0].line
            previous = raised[-1] if raised else None
            if previous is not None and (start <= previous.last or _chained(text, source, previous.last, start)):
                previous.events.append(event)
                previous.last = max(previous.last, end)
            else:
                previous = Raised(source, rank, start, end, [event])
                raised.append(previous)
            if end > head:
                previous.wraps[head] = (head + 1, end)
        out[(source, rank)] = raised
    return out


def causes_first(log: ParsedLog, ordered: list[Finding]) -> list[Finding]:
    """``ordered`` with the findings of each wrapped message moved ahead of the exception line that wraps them."""
    spans = {
        (raised.source, head): (raised.rank, span)
        for stream in exceptions(log).values()
        for raised in stream
        for head, span in raised.wraps.items()
    }
    text = _texts(log)
    for finding in ordered:  # an exception line printed without its traceback that announces more (ends with ':')
        key = (finding.evidence.source, finding.evidence.line)
        body = split_prefix(finding.evidence.text)[2].rstrip()
        if key not in spans and EXCEPTION_LINE.match(body) and body.endswith(":"):
            end = _message_end(text, *key)
            if end > key[1]:
                spans[key] = (finding.rank, (key[1] + 1, end))
    heads = sorted({key for f in ordered if (key := (f.evidence.source, f.evidence.line)) in spans}, key=lambda k: (k[0], -k[1]))
    result = list(ordered)
    for source, head in heads:  # the innermost (last printed) wrapper first, so nested wrapped errors stay ahead
        rank, (first, last) = spans[(source, head)]
        wrapped = [
            f
            for f in result
            if f.evidence.source == source and first <= f.evidence.line <= last and (f.rank is None or rank is None or f.rank == rank)
        ]
        if not wrapped:
            continue
        moved = {id(f) for f in wrapped}
        rest = [f for f in result if id(f) not in moved]
        at = next(i for i, f in enumerate(rest) if (f.evidence.source, f.evidence.line) == (source, head))
        result = rest[:at] + wrapped + rest[at:]
    return result
