"""Vector similarity between a log's error lines and the encyclopedia, as a small boost for candidates.

Signatures decide; similarity only separates candidates the signatures left close, and never
creates one (``candidates.score_candidates`` adds it to entries that already matched).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from diagnose.parse.model import ParsedLog

if TYPE_CHECKING:
    from diagnose.index import KBIndex

MAX_LINES = 30


def similarity_by_entry(log: ParsedLog, index: KBIndex, k: int = 8) -> dict[str, float]:
    """Best passage similarity per entry for the log's failing lines (empty when there are none)."""
    from diagnose.retrieve import query_text

    lines = [f.evidence.text for f in log.findings if f.role in ("initiating", "cascade")][:MAX_LINES]
    lines += [e.anchor.text for e in log.events if e.kind in ("traceback", "error_line")][:MAX_LINES]
    query = query_text(lines)
    if not query:
        return {}
    scores: dict[str, float] = {}
    for passage in index.search(query, k=k):
        scores[passage.entry_id] = max(scores.get(passage.entry_id, 0.0), max(0.0, min(1.0, passage.score)))
    return scores
