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


def confidence(score: float, *, retrieved: bool = False) -> float:
    """Calibrated confidence for a top candidate's score (the raw score when no table exists). A proposal of the
    retrieval fallback (``retrieved``) is capped at ``retrieval_precision``: the score bands hold almost no such
    proposal, so their in-sample accuracy says nothing about it."""
    if score <= 0:
        return 0.0
    found = [accuracy for lower, accuracy in _bins() if score >= lower]
    banded = found[-1] if found else min(score, 1.0)
    precision = retrieval_precision() if retrieved else None
    return round(banded if precision is None else min(banded, precision), 2)


def retrieval_precision() -> float | None:
    """How often a retrieval proposal was right on cases its margin was not fitted on (the cross-fit:
    right / all proposals, ``unknown`` logs proposed included), or None before a cross-fitted calibration."""
    crossed = _table().get("retrieval_fit", {}).get("cross_fit")
    if not crossed:
        return None
    proposed = crossed["right"] + crossed["wrong"] + crossed["unknown_proposed"]
    return crossed["right"] / proposed if proposed else None
