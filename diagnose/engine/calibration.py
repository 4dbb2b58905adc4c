"""Map a candidate score to a calibrated confidence (the share of eval cases right at that score).

The table in ``calibration.json`` is written by ``diagnose eval --calibrate`` from the rules
backend's results on the labeled suite: bins of score -> observed accuracy.
"""

from __future__ import annotations

import json
from functools import lru_cache
from pathlib import Path

_TABLE = Path(__file__).with_name("calibration.json")


@lru_cache(maxsize=1)
def _bins() -> list[tuple[float, float]]:
    if not _TABLE.is_file():
        return []
    data = json.loads(_TABLE.read_text(encoding="utf-8"))
    return sorted((float(b["min_score"]), float(b["accuracy"])) for b in data["bins"])


def confidence(score: float) -> float:
    """Calibrated confidence for a top candidate's score (the raw score when no table exists)."""
    if score <= 0:
        return 0.0
    found = [accuracy for lower, accuracy in _bins() if score >= lower]
    return round(found[-1] if found else min(score, 1.0), 2)
