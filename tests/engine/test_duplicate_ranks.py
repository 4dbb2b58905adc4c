"""Two processes announcing one global rank (Lightning's GLOBAL_RANK line): a group that can never form."""

from __future__ import annotations

from pathlib import Path

import pytest

from diagnose.parse.ingest import Source
from diagnose.pipeline import diagnose
from diagnose.schema import Diagnosis


def _run(tmp_path: Path, text: str) -> Diagnosis:
    path = tmp_path / "log.txt"
    path.write_text(text, encoding="utf-8")
    return diagnose([Source("log.txt", path)]).diagnosis


def _announcements(ranks: list[int], world: int) -> str:
    return "".join(f"initializing ddp: GLOBAL_RANK: {rank}, MEMBER: {rank + 1}/{world}\n" for rank in ranks)


@pytest.mark.parametrize(
    ("ranks", "named"),
    [
        ([1, 1, 2, 2, 3, 3, 0, 0], True),  # two nodes both computed ranks 0-3 of 8: 4-7 never join
        ([0, 1, 2, 3, 4, 5, 6, 7, 0, 1, 2, 3, 4, 5, 6, 7], False),  # two whole attempts in one log
        ([0, 1, 2, 3], False),  # a partial paste: no rank announced twice
    ],
)
def test_a_rank_announced_twice_with_another_missing_is_a_rendezvous_failure(tmp_path: Path, ranks: list[int], named: bool) -> None:
    diagnosis = _run(tmp_path, "GPU available: True, used: True\n" + _announcements(ranks, 8))
    assert (diagnosis.root_cause.id == "rendezvous-failure") is named
    if named:
        assert diagnosis.initiating_rank is None  # no rank started it: the launch gave two processes one rank


def test_duplicate_ranks_before_another_failure_stay_a_note(tmp_path: Path) -> None:
    diagnosis = _run(
        tmp_path,
        _announcements([0, 0, 1, 1], 4)
        + 'Traceback (most recent call last):\n  File "train.py", line 3, in <module>\n'
        + "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB.\n",
    )
    assert diagnosis.root_cause.id == "cuda-oom"
    assert any("announced by two processes" in note for note in diagnosis.notes)
