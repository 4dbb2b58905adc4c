"""Logs hard-wrapped at a terminal's width: each line's pieces read whole again, line numbers kept.

A log copied out of tmux, screen or a narrow console is broken into pieces of exactly the terminal's width:
a message no longer matches its signature, and a piece can match another entry's (``cannot open shared object
file`` without the ``NCCL INFO`` that said it was a plugin probe). ``wrap_width`` tells such a source from its
first chunk: its longest lines all have one length, more of them than of the lengths just below (a piece's
remainder is as likely to be any length), and the line after one is a continuation, not a record of its own
(a rank prefix, a date, a level, or the same start as the line before: lines cut at a fixed width, or one
message repeated on every rank). ``unwrap`` then joins each wrapped line's pieces: the whole line stands at its
first piece's number and the other pieces are blank for the signatures; the kept lines show the whole line
at the first number and each piece as printed at its own, so every cited number and text is the file's.
The decision uses the lengths of the lines as read (masking changes lengths), never their text.
"""

from __future__ import annotations

import re
from collections.abc import Callable

from diagnose.parse.prefixes import QUOTE

MIN_WIDTH = 60
MAX_WIDTH = 400
MIN_WRAPPED = 2
"""Lines at the width, at least: fewer say nothing."""
NEAR = 10
"""Lengths just below the width that a wrapped log has few of."""
SPIKE = 2.0
"""Lines at the width over lines NEAR below it, at least (a piece's remainder is as likely to be any length)."""
MAX_NEW_RECORDS = 0.3
"""Share of lines at the width followed by what starts a new record: above it, the lines were cut, not wrapped."""
HEAD = 6
NOTE = "{name} is hard-wrapped at {width} columns: each wrapped line is read whole, at its first line"
_DIGITS = re.compile(r"\d+")
_QUOTES = re.compile(rf"^(?:{QUOTE.pattern})+")
RECORD_START = re.compile(
    r"^(?:\s*(?:\[(?:rank|default|worker)?\d+\]:|\d{1,5}: )|\[?\d{4}-\d\d-\d\d|[IWEF]\d{4} "
    r"|\[?(?:DEBUG|INFO|WARNING|ERROR|CRITICAL)\b|Traceback |\s+File \")"
)
"""A line that starts a record of its own (a rank or task prefix, a date, a glog header, a level, a traceback); a wrap's
piece may start with digits and a colon too (``4:20 DUE TO``, ``00057:815:864``), without srun's space after it."""


def wrap_width(lines: list[str]) -> int | None:
    """The width the lines were hard-wrapped at, or None when they were not."""
    lengths = [len(line) for line in lines]
    width = max(lengths, default=0)
    if not MIN_WIDTH <= width <= MAX_WIDTH:
        return None
    at = [i for i, n in enumerate(lengths) if n == width and i + 1 < len(lines) and lines[i + 1].strip()]
    # a piece's remainder is no evidence against a wrap: lines repeated on every rank all leave one remainder length
    near = sum(1 for i, n in enumerate(lengths) if width - NEAR <= n < width and (i == 0 or lengths[i - 1] != width))
    if len(at) < MIN_WRAPPED or len(at) < SPIKE * near:
        return None
    new_records = sum(1 for i in at if _starts_record(lines[i + 1], lines[i]))
    return width if new_records <= MAX_NEW_RECORDS * len(at) else None


def _starts_record(line: str, before: str) -> bool:
    """True when ``line`` starts like a record of its own: like the line before it (digits aside), or with a prefix.
    A Markdown or e-mail quote marker (``> ``) on every line is no part of what was printed."""
    line, before = _QUOTES.sub("", line), _QUOTES.sub("", before)
    return _DIGITS.sub("#", line[:HEAD]) == _DIGITS.sub("#", before[:HEAD]) or bool(RECORD_START.match(line))


def unwrap(lines: list[str], raw: list[str], width: int, mask: Callable[[str], str]) -> tuple[list[str], list[str], list[int]]:
    """(lines to scan, lines to keep, the indexes of the pieces that continue a line) for masked ``lines``, read as ``raw``.

    A line as long as ``width`` as read continues on the next non-blank line; ``mask`` masks the raw pieces joined,
    so a value split by the wrap is masked whole (and then its pieces are kept blank, not as printed). The masked
    pieces are never masked again: that would escape the placeholders they hold (``<_HOST_1>``, see the redactor).
    """
    scan = list(lines)
    keep = list(lines)
    pieces: list[int] = []
    i = 0
    while i < len(lines):
        end = i
        while end + 1 < len(lines) and len(raw[end]) == width and lines[end + 1].strip():
            end += 1
        if end > i:
            joined = "".join(lines[i : end + 1])
            whole = mask("".join(raw[i : end + 1]))
            scan[i] = keep[i] = whole
            pieces.extend(range(i + 1, end + 1))
            for j in range(i + 1, end + 1):
                scan[j] = ""
                if whole != joined:  # a value the wrap had cut is masked now: its pieces are not shown as printed
                    keep[j] = ""
        i = end + 1
    return scan, keep, pieces


class Unwrapper:
    """Per source: the width from its first chunk (``wrap_width``), then each chunk of a wrapped one read whole."""

    def __init__(self, mask: Callable[[str], str], notes: list[str]) -> None:
        """``mask`` masks a wrapped line's raw pieces joined; ``notes`` receives one line per wrapped source."""
        self.mask = mask
        self.notes = notes
        self.widths: dict[str, int | None] = {}

    def chunk(self, name: str, raw: str, masked: str) -> tuple[str, list[str] | None, list[int]]:
        """(the masked text to scan, the lines to keep: None when the source is not wrapped, the indexes of the lines
        that continue the line above them) for one chunk."""
        if name in self.widths and self.widths[name] is None:
            return masked, None, []  # decided on the source's first chunk: not wrapped
        raw_lines = raw.split("\n")
        if name not in self.widths:
            self.widths[name] = wrap_width(raw_lines)
            if self.widths[name] is None:
                return masked, None, []
            self.notes.append(NOTE.format(name=name, width=self.widths[name]))
        width = self.widths[name]
        lines = masked.split("\n")
        if width is None or len(raw_lines) != len(lines):
            return masked, None, []
        scanned, shown, pieces = unwrap(lines, raw_lines, width, self.mask)
        return "\n".join(scanned), shown, pieces
