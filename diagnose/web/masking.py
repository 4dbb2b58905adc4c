"""The redactor as the web app uses it: counts for an upload, and a masked question."""

from __future__ import annotations

from diagnose.parse.ingest import Source, read_chunks
from diagnose.schema import Redactions


def count_masks(sources: list[Source]) -> Redactions:
    """What masking the sources replaces, by type: counts only, never the mapping or the text."""
    from redaction import Redactor

    redactor = Redactor()
    for source in sources:
        for chunk in read_chunks(source):
            redactor.redact_text(chunk.text)
    counts = redactor.counts
    return Redactions(total=sum(counts.values()), by_type=counts)


def mask_question(text: str) -> str:
    """A follow-up question masked like the log (a fresh mapping: its placeholder numbers are its own)."""
    from redaction import Redactor

    return Redactor().redact_text(text)
