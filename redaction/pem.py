"""PEM private-key blocks, which span lines: the only masking that keeps state across lines.

Every line of a block, from ``-----BEGIN ... PRIVATE KEY-----`` to ``-----END ...-----``, is
replaced by one ``<PRIVATE_KEY_n>`` (text before the BEGIN marker and after the END marker
stays), so line numbers still match the input. A block ends at its END marker, at the first
line that is not base64 or a PEM header, or after ``MAX_LINES`` lines, so a BEGIN without an
END cannot swallow the rest of a log.
"""

from __future__ import annotations

import re
from collections.abc import Callable

BEGIN_RE = re.compile(r"-----BEGIN[ A-Z0-9_-]{0,100}PRIVATE KEY(?: BLOCK)?-----", re.IGNORECASE)
END_RE = re.compile(r"-----END[ A-Z0-9_-]{0,100}(?:PRIVATE KEY(?: BLOCK)?)?-----", re.IGNORECASE)
# A launcher prefix ("[rank0]: ", "node07: ") that stays in front of masked key lines.
_PREFIX = r"(?:\[[^\]]{1,40}\]:?\s?|\S{1,40}:\s)?\s*"
_PREFIX_RE = re.compile(_PREFIX)
# A body line: optional launcher prefix, then base64 or a PEM header.
_BODY_RE = re.compile(rf"^(?P<prefix>{_PREFIX})(?P<body>[A-Za-z0-9+/=]{{2,}}|(?:Proc-Type|DEK-Info|Comment|Version|Hash):.*)\s*$")
MAX_LINES = 400
_DIGITS = re.compile(r"[0-9]+")
_BODY_ONLY_RE = re.compile(r"(?P<body>[A-Za-z0-9+/=]{2,}|(?:Proc-Type|DEK-Info|Comment|Version|Hash):.*)\s*$")


def prefix_shape(prefix: str) -> re.Pattern[str] | None:
    """A regex for the launcher prefix of a BEGIN line, with every digit run free.

    Whatever stands before ``-----BEGIN`` (``  3: ``, ``[1,0]<stdout>:``, a kubectl or Python
    logging timestamp, ``[rank3]:``) is printed again before every line of the key, with
    other timestamps; the body lines are recognised behind the same shape of prefix.
    """
    if not prefix.strip():
        return None
    parts = _DIGITS.split(prefix)
    return re.compile("[0-9]+".join(re.escape(part) for part in parts))


Placeholder = Callable[[], str]


class PemMasker:
    """Masks PEM private-key blocks line by line, remembering an open block between calls."""

    def __init__(self, new_placeholder: Placeholder) -> None:
        self._new_placeholder = new_placeholder
        self._current: str | None = None
        self._lines = 0
        self._shape: re.Pattern[str] | None = None

    @property
    def active(self) -> bool:
        """True while inside a block whose END marker has not been seen."""
        return self._current is not None

    def begin_in(self, line: str) -> bool:
        """Tell whether ``line`` opens a private-key block."""
        return "-----" in line and BEGIN_RE.search(line) is not None

    def mask(self, line: str) -> str | None:
        """Mask ``line`` if it opens or continues a block; None when it is not part of one."""
        if self._current is None:
            begin = BEGIN_RE.search(line) if "-----" in line else None
            if begin is None:
                return None
            self._current = self._new_placeholder()
            self._lines = 0
            self._shape = prefix_shape(line[: begin.start()])
            return line[: begin.start()] + self._after_begin(line[begin.start() :])
        self._lines += 1
        shaped = self._shape.match(line) if self._shape is not None else None
        end = END_RE.search(line)
        if end is not None:
            self._current, placeholder = None, self._current
            plain = _PREFIX_RE.match(line, 0, end.start())
            prefix = shaped.group() if shaped and shaped.end() <= end.start() else (plain.group() if plain else "")
            return prefix + (placeholder or "") + line[end.end() :]
        if shaped is not None and (rest := _BODY_ONLY_RE.match(line, shaped.end() + _space(line, shaped.end()))):
            return line[: rest.start()] + (self._current or "")
        body = _BODY_RE.match(line)
        if (body is None and line.strip() and line.strip() != (shaped.group().strip() if shaped else None)) or self._lines > MAX_LINES:
            self._current = None
            return None
        return line if body is None else str(body.group("prefix")) + (self._current or "")

    def _after_begin(self, rest: str) -> str:
        """Mask a line from its BEGIN marker on, closing the block if it also ends there."""
        end = END_RE.search(rest, 1)
        if end is not None:
            self._current, placeholder = None, self._current
            return (placeholder or "") + rest[end.end() :]
        return self._current or ""


def _space(line: str, pos: int) -> int:
    """Count the blanks at ``line[pos:]``."""
    return len(line) - pos - len(line[pos:].lstrip(" \t"))
