"""Retrieval, the one front-end to the vector index: passages for a log's error lines, and similarity per entry.

``retrieve`` answers searches (signature hits first, then the nearest passages); ``similarity_by_entry``
gives the pipeline a small boost for candidates the signatures already found: signatures decide,
similarity only separates candidates they left close, and never creates one.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import TYPE_CHECKING

from diagnose.encyclopedia.embedding import HashEmbedding, normalize
from diagnose.encyclopedia.entries import Entry
from diagnose.parse.parsed_log import ParsedLog
from diagnose.schema import ROLE_ORDER

if TYPE_CHECKING:
    from diagnose.encyclopedia.index import KBIndex
    from diagnose.encyclopedia.index_models import Passage

MAX_QUERY_LINES = 30


def query_text(event_texts: Iterable[str], max_lines: int = MAX_QUERY_LINES) -> str:
    """The query for masked event lines: each normalised (numbers, addresses, pseudonyms gone), repeats dropped."""
    lines: dict[str, None] = {}
    for text in event_texts:
        for line in text.splitlines():
            shape = normalize(line).strip()
            if shape:
                lines.setdefault(shape)
    return "\n".join(list(lines)[:max_lines])


def signature_hits(lines: Iterable[str], entries: list[Entry]) -> list[str]:
    """Ids of the entries whose signatures match the lines, best first.

    An entry scores the sum, over the distinct line shapes it matches, of its most specific matching signature's
    weight: the entry that explains more of the lines, more specifically, comes first. Ties go to the better role.
    """
    best: dict[tuple[str, str], tuple[float, int]] = {}
    for line in lines:
        shape = normalize(line)
        for entry in entries:
            for signature in entry.signatures:
                if signature.regex.search(line):
                    key = (entry.id, shape)
                    weight, role = best.get(key, (0.0, len(ROLE_ORDER)))
                    best[key] = (max(weight, signature.weight), min(role, ROLE_ORDER[signature.role]))
    scores: dict[str, tuple[float, int]] = {}
    for (entry_id, _), (weight, role) in best.items():
        total, best_role = scores.get(entry_id, (0.0, len(ROLE_ORDER)))
        scores[entry_id] = (total + weight, min(best_role, role))
    return sorted(scores, key=lambda entry_id: (-scores[entry_id][0], scores[entry_id][1], entry_id))


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


def excerpt(text: str, query: str, width: int = 160) -> str:
    """The line of a passage closest to the query (lexically), to show next to a search result."""
    lines = [line.strip() for line in text.splitlines() if line.strip() and not line.lstrip().startswith(("```", "|---", "| Symptom"))]
    if not lines:
        return ""
    vectors = HashEmbedding(dim=1024)([query, *lines])
    best = max(range(len(lines)), key=lambda i: float(vectors[0] @ vectors[i + 1]))
    line = lines[best]
    return line if len(line) <= width else line[: width - 1] + "…"


def similarity_by_entry(log: ParsedLog, index: KBIndex, k: int = 8) -> dict[str, float]:
    """Best passage similarity per entry for the log's failing lines (empty when there are none)."""
    lines = [f.evidence.text for f in log.findings if f.role in ("initiating", "cascade")][:MAX_QUERY_LINES]
    lines += [e.anchor.text for e in log.events if e.kind in ("traceback", "error_line")][:MAX_QUERY_LINES]
    query = query_text(lines)
    if not query:
        return {}
    scores: dict[str, float] = {}
    for passage in index.search(query, k=k):
        scores[passage.entry_id] = max(scores.get(passage.entry_id, 0.0), max(0.0, min(1.0, passage.score)))
    return scores
