"""Confidence calibration: bands fitted from eval results are non-decreasing and used by the engine."""

from __future__ import annotations

import zlib

import pytest

from diagnose.engine import calibration
from diagnose.engine.calibration import confidence
from diagnose.evaluation.calibrate import (
    MIN_SUPPORT,
    OFF,
    Sample,
    SampleKind,
    cross_fit,
    dev_samples,
    fit,
    fit_retrieval_threshold,
    precision_curve,
)


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


def _noted(margin: float, proposed: str, expected: str) -> dict[str, object]:
    note = f"retrieval: nearest example of {proposed} by a margin of {margin:.2f} (similarity 0.80) (threshold 1.01): x; below"
    return {"split": "dev", "expected": expected, "notes": [note]}


def _samples(margin: float, right: int, wrong: int = 0, kind: SampleKind = "held-out") -> list[Sample]:
    return [Sample("c", kind, margin, "cuda-oom", True)] * right + [Sample("c", kind, margin, "segfault", False)] * wrong


def test_the_retrieval_threshold_needs_enough_right_held_out_proposals_above_it() -> None:
    samples = _samples(0.9, 6) + _samples(0.7, 5, 1) + _samples(0.3, 4, 6) + _samples(0.2, 0, 3, kind="unknown")
    assert fit_retrieval_threshold(samples) == 0.7  # 11 right of 12 from 0.7; from 0.3 only 15 of 22
    assert fit_retrieval_threshold(_samples(0.9, MIN_SUPPORT - 1)) == OFF  # too few right proposals: no threshold is backed
    assert fit_retrieval_threshold([]) == OFF
    # precise at one point only: a wrong proposal above it, with support, keeps it from being the threshold
    assert fit_retrieval_threshold(_samples(0.9, 12, 4) + _samples(0.5, 40)) == OFF  # 52 of 56 from 0.5, but 12 of 16 from 0.9


def test_precision_curve_counts_proposals_and_wrongly_named_unknowns() -> None:
    samples = _samples(0.8, 3, 1) + _samples(0.4, 1, 0) + _samples(0.6, 0, 1, kind="unknown")
    low, high = precision_curve(samples, [0.5, 0.7])
    assert low == {"threshold": 0.5, "proposed": 5, "right": 3, "precision": 0.6, "recall": 0.75, "unknown_proposed": 1}
    assert high["proposed"] == 4 and high["unknown_proposed"] == 0


def test_without_held_out_samples_the_dev_retrieval_notes_are_read_never_test() -> None:
    rows = [_noted(0.6, "cuda-oom", "cuda-oom"), _noted(0.2, "segfault", "unknown"), {**_noted(0.9, "x", "x"), "split": "test"}]
    assert [(s.margin, s.right, s.kind) for s in dev_samples(rows)] == [(0.6, True, "fallback"), (0.2, False, "unknown")]
    table = fit([{**r, "got": "unknown", "score": 0.0, "correct": False} for r in rows])
    assert table["retrieval_threshold"] == OFF
    fitted = fit([], _samples(0.6, MIN_SUPPORT))
    assert fitted["retrieval_threshold"] == 0.6
    assert fitted["retrieval_fit"]["samples"]["held-out"] == MIN_SUPPORT


def test_held_out_samples_count_as_the_few_cases_the_fallback_really_sees() -> None:
    # 40 held-out proposals right from 0.3, but the fallback sees 2 classed cases per 6 unknown ones: the 3 unknown
    # cases proposed at 0.3 outweigh the held-out ones there; from 0.6 nothing wrong is proposed
    samples = _samples(0.6, 20) + _samples(0.3, 20) + _samples(0.3, 0, 3, kind="unknown") + _samples(0.0, 0, 3, kind="unknown")
    samples += _samples(0.0, 0, 2, kind="fallback")
    assert fit_retrieval_threshold(samples) == 0.6
    at_low = precision_curve(samples, [0.3])[0]
    assert at_low["right"] == 40 and at_low["unknown_proposed"] == 3
    assert at_low["precision"] == round(40 * 2 / 42 / (40 * 2 / 42 + 3), 3)  # each classed sample counts 2/42
    # the same samples without the unknown ones: 40 of 42 right from 0.0
    assert fit_retrieval_threshold([s for s in samples if s.kind != "unknown"]) == 0.0


def test_an_unknown_log_rightly_proposed_an_entry_its_label_accepts_raises_no_threshold() -> None:
    """A log labeled ``unknown`` that accepts an entry (a download that failed) counts as the eval counts it: right."""
    held_out = _samples(0.6, 20) + _samples(0.3, 20)
    accepted = [Sample("u", "unknown", 0.5, "hub-download-failure", True)] * 5
    assert fit_retrieval_threshold(held_out + accepted) == 0.3
    assert precision_curve(held_out + accepted, [0.3])[0]["unknown_proposed"] == 0
    wrong = [Sample("u", "unknown", 0.5, "segfault", False)] * 5
    assert fit_retrieval_threshold(held_out + wrong) == 0.6  # 40 of 45 right from 0.3, 20 of 25 from 0.5


def _case_samples(prefix: str, count: int, margin: float, right: bool, kind: SampleKind = "held-out") -> list[Sample]:
    return [Sample(f"{prefix}{i}", kind, margin, "cuda-oom" if right else "segfault", right) for i in range(count)]


def test_the_cross_fit_counts_each_half_at_the_margin_fitted_on_the_other() -> None:
    samples = _case_samples("r", 60, 0.8, True) + _case_samples("w", 10, 0.1, False) + _case_samples("u", 8, 0.05, False, "unknown")
    halves = [[s for s in samples if zlib.crc32(s.case.encode()) % 2 == h] for h in (0, 1)]
    assert all(sum(s.right for s in half) >= MIN_SUPPORT for half in halves)  # each half can be fitted alone
    # both halves fit a margin above the wrong and unknown lookups: every right one is counted once, nothing else
    assert cross_fit(samples) == {"right": 60, "wrong": 0, "unknown_proposed": 0}
    # an unknown case as near as the right ones is proposed in its half whatever the other half fitted
    near = _case_samples("n", 2, 0.9, False, "unknown")
    assert cross_fit(samples + near)["unknown_proposed"] >= 1


def test_a_retrieval_proposal_is_no_surer_than_retrieval_was_on_cases_it_was_not_fitted_on(monkeypatch: pytest.MonkeyPatch) -> None:
    table = {
        "bins": [{"min_score": 0.0, "accuracy": 0.97, "cases": 40}],
        "retrieval_fit": {"cross_fit": {"right": 30, "wrong": 8, "unknown_proposed": 2}},
    }
    monkeypatch.setattr(calibration, "_table", lambda: table)
    assert calibration.retrieval_precision() == 30 / 40
    assert calibration.confidence(0.4) == 0.97  # a signature's answer at that score: the band's accuracy
    assert calibration.confidence(0.4, retrieved=True) == 0.75
    monkeypatch.setattr(calibration, "_table", lambda: {"bins": table["bins"]})  # no cross-fit recorded yet
    assert calibration.confidence(0.4, retrieved=True) == 0.97
