"""Masking at ingress: secrets, credentials and identifying names out of raw log text.

>>> from redaction import Redactor, redact
>>> r = Redactor()
>>> r.redact_line("MASTER_ADDR=node07.cluster.internal")
'MASTER_ADDR=<HOST_1>'
"""

from __future__ import annotations

from typing import NamedTuple

from redaction.redactor import Redactor

__all__ = ["Redacted", "Redactor", "redact"]


class Redacted(NamedTuple):
    """Masked text and the number of masks applied, by type (never the mapping itself)."""

    text: str
    counts: dict[str, int]


def redact(text: str) -> Redacted:
    """Mask ``text`` with a fresh :class:`Redactor` and return the result with its counts."""
    redactor = Redactor()
    masked = redactor.redact_text(text)
    return Redacted(masked, redactor.counts)
