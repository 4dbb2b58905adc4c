"""Choosing which recognizer results to apply when they overlap."""

from __future__ import annotations

from bisect import bisect_right, insort
from collections.abc import Iterable
from typing import NamedTuple


class Span(NamedTuple):
    """A stretch of a line to replace: ``line[start:end]`` masked as ``entity``, keyed by ``value``."""

    start: int
    end: int
    entity: str
    value: str
    source: int


def resolve(results: Iterable[tuple[int, int, str, float, int]], line: str) -> list[Span]:
    """Turn overlapping ``(start, end, entity, score, source)`` results into disjoint spans, by start.

    Higher scores, then longer matches, win. A loser keeps the parts of its match that no
    winner covers (when they hold a letter or digit), so overlaps never leak text.
    """
    ranked = sorted(results, key=lambda r: (-r[3], r[0] - r[1], r[0]))
    chosen: list[Span] = []
    for start, end, entity, _, source in ranked:
        value = line[start:end]
        for a, b in _uncovered(chosen, start, end):
            if any(c.isalnum() for c in line[a:b]):
                insort(chosen, Span(a, b, entity, value, source))
    return chosen


def _uncovered(chosen: list[Span], start: int, end: int) -> list[tuple[int, int]]:
    """Return the parts of ``[start, end)`` that no span in the sorted, disjoint ``chosen`` covers."""
    pieces = []
    index = max(bisect_right(chosen, (start,)) - 1, 0)
    cursor = start
    while index < len(chosen) and chosen[index].start < end:
        span = chosen[index]
        if span.end > cursor:
            if span.start > cursor:
                pieces.append((cursor, span.start))
            cursor = max(cursor, span.end)
        index += 1
    if cursor < end:
        pieces.append((cursor, end))
    return pieces
