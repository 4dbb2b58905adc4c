"""Rank lists as people read them: ``[0, 1, 2, 3, 7]`` -> ``0-3, 7``."""

from __future__ import annotations

from collections.abc import Iterable


def rank_ranges(ranks: Iterable[int], limit: int | None = None) -> str:
    """Consecutive ranks as runs (``0-3, 7``), sorted, duplicates folded; past ``limit`` runs, ``, …``."""
    runs: list[list[int]] = []
    for rank in sorted(set(ranks)):
        if runs and rank == runs[-1][1] + 1:
            runs[-1][1] = rank
        else:
            runs.append([rank, rank])
    shown = runs if limit is None else runs[:limit]
    text = ", ".join(str(a) if a == b else f"{a}-{b}" for a, b in shown)
    return text + (", …" if len(shown) < len(runs) else "")
