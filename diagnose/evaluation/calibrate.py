"""Fit the confidence table: observed top-1 accuracy by score band, made non-decreasing.

The table maps a top candidate's raw score to the share of eval cases that were right at that
score, by the rule of succession ((right + 1) / (cases + 2): a band that was always right still
says less than certain); ``diagnose.calibration.confidence`` reads it. Fitted on the labeled suite, so it is an
in-sample estimate: it says how often this engine was right on these cases at that score.
"""

from __future__ import annotations

import re
from typing import Any

EDGES = (0.0, 0.5, 0.7, 0.85, 0.95)
TARGET_PRECISION = 0.9
"""The retrieval fallback proposes an entry from the similarity at which its dev proposals are right this often."""
MIN_SUPPORT = 3
"""Right dev proposals at or above a threshold needed to trust it; with fewer, the fallback stays off."""
OFF = 1.01
"""A threshold no cosine similarity reaches: the fallback never proposes."""
_NOTE = re.compile(r"^retrieval: nearest example of (\S+) at similarity ([\d.]+)")


def _monotone(values: list[tuple[float, int]]) -> list[float]:
    """Pool adjacent violators: weighted means that never decrease."""
    blocks: list[list[float]] = []  # [mean, weight, count of bands]
    for mean, weight in values:
        blocks.append([mean, float(weight), 1.0])
        while len(blocks) > 1 and blocks[-2][0] > blocks[-1][0]:
            m2, w2, c2 = blocks.pop()
            m1, w1, c1 = blocks.pop()
            total = w1 + w2
            blocks.append([(m1 * w1 + m2 * w2) / total if total else 0.0, total, c1 + c2])
    out: list[float] = []
    for mean, _, count in blocks:
        out += [mean] * int(count)
    return out


def fit_retrieval_threshold(results: list[dict[str, Any]]) -> float:
    """The lowest similarity at which the nearest example's entry is right TARGET_PRECISION of the time on dev cases.

    Read from each result's retrieval note (written whatever the threshold in force). A threshold needs at least
    MIN_SUPPORT right proposals at or above it: when no similarity has that support, the fallback stays OFF, for a
    threshold above every dev proposal seen would be a guess that no dev case backs.
    """
    seen: list[tuple[float, bool]] = []
    for row in results:
        if row.get("split") != "dev":
            continue
        for note in row.get("notes", []):
            match = _NOTE.match(note)
            if match:
                seen.append((float(match.group(2)), match.group(1) == row["expected"]))
    for threshold in sorted({score for score, _ in seen}):
        proposed = [right for score, right in seen if score >= threshold]
        if sum(proposed) >= max(MIN_SUPPORT, TARGET_PRECISION * len(proposed)):
            return threshold
    return OFF


def fit(results: list[dict[str, Any]]) -> dict[str, Any]:
    """The calibration table from ``diagnose eval --json`` results (never from the frozen test split)."""
    results = [r for r in results if r.get("split") != "test"]
    scored = [r for r in results if r["got"] not in ("unknown", "error")]
    bands = []
    for low, high in zip(EDGES, (*EDGES[1:], 1.01), strict=True):
        rows = [r for r in scored if low <= r["score"] < high]
        accuracy = (sum(r["correct"] for r in rows) + 1) / (len(rows) + 2)  # rule of succession: no band claims 1.0
        bands.append((low, accuracy, len(rows)))
    kept = [b for b in bands if b[2]]
    smoothed = _monotone([(acc, n) for _, acc, n in kept])
    return {
        "fitted_on": f"{len(scored)} eval cases with a diagnosis (rules backend)",
        "bins": [{"min_score": low, "accuracy": round(acc, 3), "cases": n} for (low, _, n), acc in zip(kept, smoothed, strict=True)],
        "retrieval_threshold": fit_retrieval_threshold(results),
    }
