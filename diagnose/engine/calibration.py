"""Map a candidate score to a calibrated confidence (the share of eval cases right at that score).

The table in ``calibration.json`` is written by ``diagnose eval --calibrate`` from the rules
backend's results on the labeled suite: bins of score -> observed accuracy; and the similarity from which the
retrieval fallback proposes an entry (``retrieval_threshold``, fitted on the dev split).
"""

from __future__ import annotations

import json
from functools import lru_cache
from pathlib import Path
from typing import Any

_TABLE = Path(__file__).with_name("calibration.json")


DEFAULT_RETRIEVAL_THRESHOLD = 0.6


@lru_cache(maxsize=1)
def _table() -> dict[str, Any]:
    if not _TABLE.is_file():
        return {}
    data: dict[str, Any] = json.loads(_TABLE.read_text(encoding="utf-8"))
    return data


def _bins() -> list[tuple[float, float]]:
    return sorted((float(b["min_score"]), float(b["accuracy"])) for b in _table().get("bins", []))


def retrieval_threshold() -> float:
    """The similarity from which the nearest encyclopedia example is proposed (fitted on the dev split)."""
    return float(_table().get("retrieval_threshold", DEFAULT_RETRIEVAL_THRESHOLD))


def confidence(score: float) -> float:
    """Calibrated confidence for a top candidate's score (the raw score when no table exists)."""
    if score <= 0:
        return 0.0
    found = [accuracy for lower, accuracy in _bins() if score >= lower]
    return round(found[-1] if found else min(score, 1.0), 2)
