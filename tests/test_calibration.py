"""Confidence calibration: bands fitted from eval results are non-decreasing and used by the engine."""

from __future__ import annotations

from diagnose.engine.calibration import confidence
from diagnose.evaluation.calibrate import OFF, fit, fit_retrieval_threshold


def _row(score: float, correct: bool) -> dict[str, object]:
    return {"got": "cuda-oom", "score": score, "correct": correct}


def test_bands_report_observed_accuracy_and_never_decrease() -> None:
    rows = [_row(0.6, True)] * 3 + [_row(0.6, False)] + [_row(0.8, False)] * 2 + [_row(0.8, True)]
    rows += [_row(0.99, True)] * 9 + [_row(0.99, False)]
    table = fit([*rows, {"got": "unknown", "score": 0.0, "correct": True}])
    accuracies = [b["accuracy"] for b in table["bins"]]
    assert accuracies == sorted(accuracies)
    assert table["bins"][-1] == {"min_score": 0.95, "accuracy": round(10 / 12, 3), "cases": 10}  # 9 of 10: (9+1)/(10+2)
    # 4/6 and 2/5 pooled by their case counts (4 and 3): a higher score never means less
    assert table["bins"][0]["accuracy"] == round((4 / 6 * 4 + 2 / 5 * 3) / 7, 3)


def test_a_band_that_was_always_right_still_claims_less_than_certainty() -> None:
    table = fit([_row(0.99, True)] * 184)
    assert table["bins"] == [{"min_score": 0.95, "accuracy": round(185 / 186, 3), "cases": 184}]
    assert table["bins"][0]["accuracy"] < 1.0


def test_engine_confidence_comes_from_the_shipped_table() -> None:
    assert confidence(0.0) == 0.0
    high, low = confidence(0.99), confidence(0.6)
    assert 0.0 < low <= high <= 1.0


def _noted(similarity: float, proposed: str, expected: str) -> dict[str, object]:
    note = f"retrieval: nearest example of {proposed} at similarity {similarity:.2f} (threshold 1.01): x; below the threshold"
    return {"split": "dev", "expected": expected, "notes": [note]}


def test_the_retrieval_threshold_needs_right_dev_proposals_above_it() -> None:
    rows = [_noted(0.9, "cuda-oom", "cuda-oom"), _noted(0.8, "disk-full", "disk-full"), _noted(0.75, "segfault", "segfault")]
    assert fit_retrieval_threshold([*rows, _noted(0.5, "segfault", "unknown")]) == 0.75
    # right proposals only below a wrong one, or too few of them: no threshold is backed by dev, the fallback stays off
    assert fit_retrieval_threshold([_noted(0.4, "cuda-oom", "cuda-oom"), _noted(0.65, "segfault", "unknown")]) == OFF
    assert fit_retrieval_threshold(rows[:2]) == OFF
    assert fit_retrieval_threshold([]) == OFF
    assert fit_retrieval_threshold([{**_noted(0.9, "cuda-oom", "cuda-oom"), "split": "test"}] * 5) == OFF
