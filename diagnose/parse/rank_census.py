"""Which ranks a log's launcher prefixes name, counted over whole chunks at C speed.

A source keeps one prefix style (torchrun's ``[rankN]:``, srun's ``N:``, Open MPI's ``[job,N]<stdout>:``),
so the styles a source uses are looked for in full only every ``RECHECK_CHUNKS`` chunks; in between,
only those styles are counted. Looking for an absent marker costs a full pass over the chunk each time.
"""

from __future__ import annotations

import re

from diagnose.parse.prefixes import RANK_CENSUS, SRUN_RANK

RECHECK_CHUNKS = 16


class RankCensus:
    """Accumulates the ranks named by launcher prefixes, chunk by chunk, per source."""

    def __init__(self) -> None:
        self.ranks: set[int] = set()
        self._styles: dict[str, list[re.Pattern[str]]] = {}
        self._chunks: dict[str, int] = {}

    def add(self, text: str, source: str) -> None:
        """Count the ranks the prefixes of one chunk of ``source`` name."""
        seen = self._chunks.get(source, 0)
        self._chunks[source] = seen + 1
        styles = self._styles.get(source)
        if styles is None or seen % RECHECK_CHUNKS == 0:
            styles = [pattern for marker, pattern in RANK_CENSUS if marker in text]
            if SRUN_RANK.match(text) or "\n0: " in text:
                styles.append(SRUN_RANK)
            known = self._styles.get(source, [])
            self._styles[source] = styles = [*known, *(p for p in styles if p not in known)]
        for pattern in styles:
            self.ranks.update(map(int, set(pattern.findall(text))))
