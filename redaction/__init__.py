"""Masking at ingress: secrets, credentials and identifying names out of raw log text.

>>> from redaction import Redactor, redact
>>> r = Redactor()
>>> r.redact_line("MASTER_ADDR=node07.cluster.internal")
'MASTER_ADDR=<HOST_1>'

Besides ``redact_text``/``redact_line``/``redact_lines``/``sweep_known`` and ``counts``:

- ``Redactor.unsure``: ``[Unsure(line_no, snippet), ...]``, random-looking values no recognizer
  claimed (at most 100; ``unsure_total`` counts all). The snippet shows the value in clear for
  the user's own terminal: never log, store or send it (see :mod:`redaction.unsure`).
- ``Redactor.export_state() -> dict`` and ``Redactor.from_state(state) -> Redactor``: a JSON-safe
  state without raw values (keyed hashes) so a later session, a chat about the same log, gives
  a value the log masked the log's placeholder and numbers new values after the log's.

``import redaction`` stays cheap: presidio is imported on the first ``Redactor()``.
"""

from __future__ import annotations

from typing import NamedTuple

from redaction.redactor import Redactor
from redaction.unsure import Unsure

__all__ = ["Redacted", "Redactor", "Unsure", "redact"]


class Redacted(NamedTuple):
    """Masked text and the number of masks applied, by type (never the mapping itself)."""

    text: str
    counts: dict[str, int]


def redact(text: str) -> Redacted:
    """Mask ``text`` with a fresh :class:`Redactor` and return the result with its counts."""
    redactor = Redactor()
    masked = redactor.redact_text(text)
    return Redacted(masked, redactor.counts)
