"""The time of a line that prints none (``diagnose.parse.recent_stamps``): the same answers as reading back line by
line, with each line parsed once however many lines ask."""

from __future__ import annotations

import random

import pytest

from diagnose.parse import recent_stamps
from diagnose.parse.recent_stamps import LOOKBACK, RecentStamps
from diagnose.parse.timestamps import YEARLESS, parse_timestamp


def _read_back(lines: list[str], i: int, rank: int | None) -> float | None:
    """What the answer means, read the slow way: the closest earlier stamped line of that rank within LOOKBACK."""
    for j in range(i - 1, max(-1, i - LOOKBACK), -1):
        text = lines[j]
        if rank is not None and f"{rank}]" not in text[:40] and f"{rank}:" not in text[:12]:
            continue
        stamp = parse_timestamp(text, year=YEARLESS)
        if stamp is not None:
            return stamp
    return None


def _log(seed: int, count: int) -> list[str]:
    """Ranks' lines, some stamped, most not (bars, traceback lines), with long unstamped stretches."""
    pick = random.Random(seed)
    lines = []
    for n in range(count):
        rank = pick.randrange(4)
        if pick.random() < 0.05:
            lines.append(f"[rank{rank}]: 2024-05-17 16:{n // 60 % 60:02d}:{n % 60:02d},001 INFO step {n} loss 1.2")
        else:
            lines.append(f"[rank{rank}]: Running tokenizer on dataset: {n}/90000 [00:{n % 60:02d}<01:00, 155.57 examples/s]")
    return lines


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_answers_match_reading_back_line_by_line(seed: int) -> None:
    lines = _log(seed, 3 * LOOKBACK)
    stamps = RecentStamps(lines, rank_hint=None)
    asked = sorted(random.Random(seed).sample(range(len(lines)), 300))
    for i in asked:
        for rank in (None, 0, 3):
            assert stamps.recent(i, rank) == _read_back(lines, i, rank), (i, rank)


def test_each_line_is_parsed_once_however_many_lines_ask(monkeypatch: pytest.MonkeyPatch) -> None:
    lines = ["Running tokenizer on dataset: 5/90000 [00:01<01:00, 155.57 examples/s]"] * (5 * LOOKBACK)
    parsed: list[str] = []
    monkeypatch.setattr(recent_stamps, "parse_timestamp", lambda text, year=None: parsed.append(text))
    stamps = RecentStamps(lines, rank_hint=None)
    assert all(stamps.recent(i, None) is None for i in range(len(lines)))
    assert len(parsed) == len(lines) - 1  # every line but the last is read once; a scan back from each would read 199 each
