"""Retrieval: encyclopedia passages for a log's error events, signature hits first, then vector similarity."""

from __future__ import annotations

from collections.abc import Iterable

from diagnose.embedding import normalize
from diagnose.index import KBIndex, Passage
from diagnose.kb import Entry
from diagnose.schema import ROLE_ORDER


def query_text(event_texts: Iterable[str], max_lines: int = 30) -> str:
    """The query for masked event lines: each normalised (numbers, addresses, pseudonyms gone), repeats dropped."""
    lines: dict[str, None] = {}
    for text in event_texts:
        for line in text.splitlines():
            shape = normalize(line).strip()
            if shape:
                lines.setdefault(shape)
    return "\n".join(list(lines)[:max_lines])


def signature_hits(lines: Iterable[str], entries: list[Entry]) -> list[str]:
    """Ids of the entries whose signatures match any line, most specific first (weight, then role)."""
    best: dict[str, tuple[float, int]] = {}
    for line in lines:
        for entry in entries:
            for signature in entry.signatures:
                if signature.regex.search(line):
                    key = (-signature.weight, ROLE_ORDER[signature.role])
                    best[entry.id] = min(best.get(entry.id, key), key)
    return sorted(best, key=lambda entry_id: best[entry_id])


def retrieve(event_texts: list[str], signature_entry_ids: list[str], index: KBIndex, k: int = 5) -> list[Passage]:
    """Up to ``k`` passages, one per entry: entries whose signatures matched first (given order), then the nearest."""
    query = query_text(event_texts)
    if not query:
        return []
    hits = list(dict.fromkeys(signature_entry_ids))
    matched = {p.entry_id: p for p in index.search(query, k=len(hits), entry_ids=hits)} if hits else {}
    first = [matched[entry_id] for entry_id in hits if entry_id in matched]
    rest = [p for p in index.search(query, k=k + len(first)) if p.entry_id not in matched]
    return (first + rest)[:k]
