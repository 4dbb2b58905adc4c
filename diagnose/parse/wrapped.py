"""Exception messages wrapped across lines: the signatures are searched once more in the message joined whole.

A signature is searched in one line, but what users paste often breaks a long message over several:
terminal-width wrapping (a tmux copy), Rich's tracebacks (accelerate, Lightning) which word-wrap the
message under the box at the console's width, a launcher that prefixes each printed line
(``[rank3]: ...`` on every piece). So when a line the scanner already flagged as an error line opens an
exception message (``RuntimeError: ...``, after any launcher prefix or log header) and the next lines of the same
stream continue it, the message is joined (prefixes stripped from the continuations) and scanned again.

Only lines the scanner selected are examined here, plus at most ``LOOKAHEAD`` lines after each: no pass
over every line. A continuation is not blank, not a traceback frame, not another exception, not a log
record (a timestamp or level word first); another rank's line in between is skipped. A finding from the
joined message is one that no single line of it gave; it cites the head line (its number, rank and
clock), with the joined message as its text: the engine re-reads captured values (an OOM's numbers)
from the evidence, and the message is what the library printed before it was wrapped (the line itself stays as
it is in the kept lines and excerpts). The reader records these findings before the head line's own: read whole,
the message is the fuller reading of that line. A head near the end of a chunk is carried into the next chunk
of the same source (never into another file).
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Protocol

from diagnose.parse.lines import rank_named
from diagnose.parse.prefixes import split_prefix
from diagnose.schema import Finding, LogLine

LOOKAHEAD = 7
"""Lines looked at after a head (another rank's lines count): with the reader's window of 3 around the head and
around the last continuation, every joined line stays in the excerpts of a big log."""
MAX_CONTINUATION = 6
MAX_CHARS = 2000
"""Continuation characters joined to one head; a longer line is not a wrapped piece."""

HEAD = re.compile(r"(?:^|[\]>]:?\s?|: )(?:[A-Za-z_][\w.]*\.)?[A-Z]\w*(?:Error|Exception|Interrupt)\b: ?\S|^\s*what\(\):\s+\S")
"""An exception message's first line (launcher prefixes peeled): ``torch.distributed.DistBackendError: NCCL ...``, also
after a log record's header (``ERROR 04-01 23:46:56 [engine.py:160] torch.OutOfMemoryError: ...``), and the C++
runtime's ``  what():  ...`` under ``terminate called after throwing an instance of 'dmlc::Error'``."""
_NOT_CONTINUATION = re.compile(
    r"\s*File \"|Traceback \(|During handling of|The above exception"  # a traceback
    r"|(?:[A-Za-z_][\w.]*\.)?\w*(?:Error|Exception|Warning|Interrupt|Exit|Failure)(?::|\s*$)"  # another exception
    r"|\[?[IWEFD]\d{3,4} \d\d:\d\d|\[[IWEF] |\[?\d{4}[-/]\d\d[-/]\d\d[T _]\d\d:\d\d|\[?\d\d:\d\d:\d\d"  # a clock first
    r"|(?:Jan|Feb|Mar|Apr|May|Jun|Jul|Aug|Sep|Oct|Nov|Dec) +\d+ \d\d:\d\d"
    r"|\[?(?:INFO|WARN|WARNING|ERROR|DEBUG|CRITICAL|FATAL)\b|\S+:\d+:\d+ \[\d+\] NCCL |\S+\.py:\d+: \w*Warning"
    r"|[│┃╭╰╮╯─━]|[=*#~-]{4,}|Exception raised from |frame #\d+:"  # a Rich box, a banner, a C++ stack
)


class _Scanner(Protocol):
    def scan(self, text: str, lines: list[str] | None = None) -> list[tuple[int, int]]: ...


class _Rules(Protocol):
    def finding(self, index: int, line: LogLine, order: int) -> Finding | None: ...


@dataclass
class _Message:
    """One head and the continuation bodies joined to it so far."""

    head: LogLine
    at: int | None
    """The head's index in its chunk's lines; None once the message is carried into the next chunk."""
    stream: tuple[int | None, str | None]
    order: int
    source: int
    matched: set[int]
    """Patterns a single line of the message matched, or the joined message gave already: not found again."""
    pieces: list[str] = field(default_factory=list)
    looked: int = 0
    last: int = -1


class WrappedMessages:
    """Joins wrapped exception messages at a chunk's flagged lines and returns the findings only the join gives."""

    def __init__(self, scanner: _Scanner, rules: _Rules, head_kind: int, first_signature: int) -> None:
        self.scanner, self.rules = scanner, rules
        self.head_kind, self.first_signature = head_kind, first_signature
        self.pending: list[_Message] = []
        """Messages that ran into the end of their chunk still open: continued at the start of the source's next chunk."""
        self._pieces: frozenset[int] = frozenset()

    def findings(
        self,
        hits: list[tuple[int, int]],
        lines: list[str],
        make: Callable[[int], LogLine],
        source: int,
        recent: Callable[[int, int | None], float | None],
        pieces: frozenset[int] = frozenset(),
    ) -> list[tuple[Finding, int]]:
        """(finding, index in ``lines`` of its last continuation line) for the chunk the scanner's ``hits`` are of.

        ``recent(i, rank)`` is the clock of the closest line before ``lines[i]`` of that rank (a traceback prints none).
        ``pieces``: the indexes of a hard-wrapped source's continued pieces (``diagnose.parse.hard_wrap``), blank in
        ``lines`` because the line above them holds them whole: skipped, neither ending a message nor counted.
        """
        self._pieces = pieces
        carried, self.pending = [m for m in self.pending if m.source == source], []
        heads = [i for i, pattern in hits if pattern == self.head_kind]
        if not heads and not carried:
            return []
        matched: dict[int, set[int]] = {}
        for i, pattern in hits:
            matched.setdefault(i, set()).add(pattern)
        messages = [m for m in carried if self._continue(m, lines, 0, matched)]
        for i in heads:
            head = make(i)
            rank, host, body = split_prefix(head.text)
            if not HEAD.search(body):
                continue
            message = _Message(head, i, (rank, host), (source << 32) | head.line, source, set(matched.get(i, ())))
            if self._continue(message, lines, i + 1, matched):
                messages.append(message)
        for message in self.pending:  # the next chunk has other lines to look back on
            if message.at is not None and message.head.timestamp is None:
                message.head = message.head.model_copy(update={"timestamp": recent(message.at, message.head.rank)})
            message.at = None
        return self._scan(messages, recent)

    def _continue(self, message: _Message, lines: list[str], start: int, matched: dict[int, set[int]]) -> bool:
        """Join to ``message`` its continuation lines from ``lines[start:]``; True when any was joined."""
        joined, message.last = len(message.pieces), -1
        chars = sum(map(len, message.pieces))
        for j in range(start, len(lines)):
            if j in self._pieces:
                continue
            if message.looked >= LOOKAHEAD or len(message.pieces) >= MAX_CONTINUATION:
                return len(message.pieces) > joined
            message.looked += 1
            rank, host, body = split_prefix(lines[j])
            if (rank, host) != message.stream and (rank, host) != (None, None):
                continue  # another rank's line, interleaved
            if (rank, host) != message.stream and body[:1].isspace():
                return len(message.pieces) > joined  # a terminal wraps a prefixed line at the margin, without indent
            text = body.strip()
            chars += len(text)
            if not text or chars > MAX_CHARS or _NOT_CONTINUATION.match(text):
                return len(message.pieces) > joined
            message.pieces.append(body)
            message.matched |= matched.get(j, set())
            message.last = j
        if message.looked < LOOKAHEAD and len(message.pieces) < MAX_CONTINUATION:
            self.pending.append(message)
        return len(message.pieces) > joined

    def _scan(self, messages: list[_Message], recent: Callable[[int, int | None], float | None]) -> list[tuple[Finding, int]]:
        """Scan every joined message (space-joined, and as is for a wrap inside a word) for what no single line gave."""
        if not messages:
            return []
        texts: list[str] = []
        for message in messages:
            texts.append(" ".join([message.head.text.rstrip(), *(piece.strip() for piece in message.pieces)]))
            texts.append("".join([message.head.text, *message.pieces]))
        found: list[tuple[Finding, int]] = []
        for k, pattern in self.scanner.scan("\n".join(texts), texts):
            message = messages[k // 2]
            if pattern < self.first_signature or pattern in message.matched:
                continue
            message.matched.add(pattern)
            if message.at is not None and message.head.timestamp is None:
                message.head = message.head.model_copy(update={"timestamp": recent(message.at, message.head.rank)})
            rank = message.head.rank if message.head.rank is not None else rank_named(split_prefix(texts[k])[2])  # past its piece
            line = message.head.model_copy(update={"text": texts[k], "rank": rank})
            finding = self.rules.finding(pattern - self.first_signature, line, message.order)
            if finding is not None:
                found.append((finding, message.last))
        return found
