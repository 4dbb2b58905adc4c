"""Rank lists as people read them."""

from __future__ import annotations

import pytest

from diagnose.rank_ranges import rank_ranges


@pytest.mark.parametrize(
    ("ranks", "limit", "shown"),
    [
        ([], None, ""),
        ([5], None, "5"),
        ([0, 1, 2, 3, 7], None, "0-3, 7"),
        ([7, 3, 2, 1, 0, 3], None, "0-3, 7"),
        ([0, 2, 4, 6, 8], 2, "0, 2, …"),
        ([0, 1, 5, 6], 2, "0-1, 5-6"),
    ],
)
def test_runs(ranks: list[int], limit: int | None, shown: str) -> None:
    assert rank_ranges(ranks, limit) == shown
