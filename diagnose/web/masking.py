"""The redactor as the web app uses it: what an upload would have masked, as counts (questions are masked by the chat)."""

from __future__ import annotations

from diagnose.parse.flight_recorder import read_dumps
from diagnose.parse.fr_sources import split_sources
from diagnose.parse.ingest import Source, read_chunks
from diagnose.schema import Redactions


def count_masks(sources: list[Source]) -> Redactions:
    """What masking the sources replaces, by type: counts only, never the mapping or the text."""
    from redaction import Redactor

    redactor = Redactor()
    logs, dumps = split_sources(sources)  # Flight Recorder dumps and archives are not text: masked as the pipeline reads them
    for source in logs:
        for chunk in read_chunks(source):
            redactor.redact_text(chunk.text)
    if dumps:
        read_dumps(dumps, redactor)
    counts = redactor.counts
    return Redactions(total=sum(counts.values()), by_type=counts)
