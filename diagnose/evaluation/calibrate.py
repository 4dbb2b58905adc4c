"""Fit the calibration: observed top-1 accuracy by score band, and the retrieval fallback's margin threshold.

The table maps a top candidate's raw score to the share of eval cases that were right at that
score, by the rule of succession ((right + 1) / (cases + 2): a band that was always right still
says less than certain); ``diagnose.calibration.confidence`` reads it. Fitted on the labeled suite, so it is an
in-sample estimate: it says how often this engine was right on these cases at that score.

The retrieval threshold is fitted on held-out wording (``held_out_samples``): the fallback answers only logs whose
wording no signature knows, and the labeled cases the rules get right are exactly the ones whose wording a
signature knows. So each such case is looked up as if the signatures that named its cause did not exist (their
examples left out of the vector store, every other example and signature kept) and records (margin, nearest entry
right?); a case the rules leave ``unknown`` records what the fallback itself would see; a case labeled ``unknown``
records its nearest entry's margin as a proposal that must not be made. Never fitted on the frozen test split.
"""

from __future__ import annotations

import re
import zlib
from collections.abc import Iterable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Literal

if TYPE_CHECKING:
    from diagnose.encyclopedia.index import KBIndex
    from diagnose.evaluation.cases import Case
    from diagnose.settings import Settings

EDGES = (0.0, 0.5, 0.7, 0.85, 0.95)
TARGET_PRECISION = 0.9
"""The retrieval fallback proposes an entry from the margin at which its held-out proposals are right this often."""
MIN_SUPPORT = 10
"""Right held-out proposals at or above a threshold needed to trust it; with fewer, the fallback stays off."""
OFF = 1.01
"""A threshold no margin reaches (margins are differences of cosines, at most 1): the fallback never proposes."""
_NOTE = re.compile(r"^retrieval: nearest example of (\S+) by a margin of (-?[\d.]+)")

SampleKind = Literal["held-out", "fallback", "unknown"]


@dataclass(frozen=True)
class Sample:
    """One retrieval lookup on a labeled case: how near its nearest example was, and whether that entry is right.

    ``held-out``: a case the rules name rightly, looked up without the signatures that fired on it;
    ``fallback``: a case the rules leave ``unknown`` although it has a class (what the fallback sees);
    ``unknown``: a case labeled ``unknown`` (a proposal is wrong, unless the label accepts the entry proposed).
    """

    case: str
    kind: SampleKind
    margin: float
    """How much nearer the nearest entry's best example is than any other entry's (``fallbacks.nearest``)."""
    proposed: str
    right: bool


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


def held_out_samples(cases: Iterable[Case], settings: Settings, index: KBIndex) -> list[Sample]:
    """One retrieval sample per usable non-test case (see the module docstring); cases the rules name wrongly are
    skipped (no wording there to hold out), as are logs with no line to look up."""
    from diagnose.engine.fallbacks import nearest
    from diagnose.engine.memory import GENERAL_CASE
    from diagnose.parse.ingest import resolve_sources
    from diagnose.pipeline import diagnose

    samples: list[Sample] = []
    for case in cases:
        if case.split == "test":
            continue
        result = diagnose(resolve_sources([str(case.log_path)]), settings=settings)  # the rules alone
        accepted = {case.label.class_, *case.label.accept}
        got = result.diagnosis.root_cause.id
        # the signatures that named this cause (or a special case of it) are held out; every other signature stays
        # known, as it would be: its lines are explained, not looked up
        fired = {f.signature for f in result.log.findings if f.role == "initiating" and GENERAL_CASE.get(f.entry_id, f.entry_id) == got}
        if case.label.class_ == "unknown":
            kind: SampleKind = "unknown"
        elif got == "unknown":
            kind = "fallback"
        elif got in accepted:
            kind = "held-out"
        else:
            continue
        found = nearest(result.log, index, without=fired)
        if found is not None:
            # an ``unknown`` log whose label accepts an entry (a launcher's teardown, a download that failed) is rightly
            # proposed that entry, as the eval counts it; any other proposal on it is wrong
            samples.append(Sample(case.id, kind, found.margin, found.hit.entry_id, found.hit.entry_id in accepted))
    return samples


def dev_samples(results: list[dict[str, Any]]) -> list[Sample]:
    """The retrieval notes of ``diagnose eval --json`` results on dev (the fallback's own lookups, no held-out wording)."""
    samples: list[Sample] = []
    for row in results:
        if row.get("split") != "dev":
            continue
        for note in row.get("notes", []):
            match = _NOTE.match(note)
            if match:
                kind: SampleKind = "unknown" if row["expected"] == "unknown" else "fallback"
                samples.append(Sample(row.get("id", ""), kind, float(match.group(2)), match.group(1), match.group(1) == row["expected"]))
    return samples


def _weights(samples: list[Sample]) -> dict[SampleKind, float]:
    """How much one sample of each kind counts in a precision.

    The fallback runs on the cases the rules leave ``unknown``: mostly logs labeled ``unknown``, a few with a class in
    wording no signature knows (``fallback``). The held-out samples stand in for those few, so all class-labeled
    samples together count as many as the ``fallback`` ones: a proposal is then judged against the mix the fallback
    really sees, not against hundreds of held-out cases that outnumber the ``unknown`` ones. Without ``fallback``
    samples every sample counts once.
    """
    classed = sum(s.kind != "unknown" for s in samples)
    fallback = sum(s.kind == "fallback" for s in samples)
    share = fallback / classed if fallback else 1.0
    return {"held-out": share, "fallback": share, "unknown": 1.0}


def _precision(proposed: list[Sample], weights: dict[SampleKind, float]) -> float | None:
    total = sum(weights[s.kind] for s in proposed)
    return sum(weights[s.kind] for s in proposed if s.right) / total if total else None


def precision_curve(samples: list[Sample], thresholds: Iterable[float] | None = None) -> list[dict[str, Any]]:
    """Per threshold: proposals made at or above it, how many were right, precision (weighted as ``_weights`` says),
    recall (of the samples whose nearest entry is right, the share proposed) and how many ``unknown`` cases would
    wrongly get a proposal."""
    steps = sorted({round(s.margin, 2) for s in samples}) if thresholds is None else sorted(thresholds)
    rightable = sum(s.right for s in samples)
    weights = _weights(samples)
    rows = []
    for threshold in steps:
        proposed = [s for s in samples if s.margin >= threshold]
        right = sum(s.right for s in proposed)
        precision = _precision(proposed, weights)
        rows.append(
            {
                "threshold": round(threshold, 3),
                "proposed": len(proposed),
                "right": right,
                "precision": None if precision is None else round(precision, 3),
                "recall": round(right / rightable, 3) if rightable else None,
                "unknown_proposed": sum(s.kind == "unknown" and not s.right for s in proposed),
            }
        )
    return rows


def fit_retrieval_threshold(samples: list[Sample]) -> float:
    """The lowest margin from which the nearest example's entry is right TARGET_PRECISION of the time (weighted as
    ``_weights`` says), at that threshold and at every higher one that still has MIN_SUPPORT right proposals (a
    threshold whose precision only holds at one point is noise). With no such margin the fallback stays OFF: a
    threshold no sample backs would be a guess."""
    weights = _weights(samples)
    good = []
    for threshold in sorted({s.margin for s in samples}):
        proposed = [s for s in samples if s.margin >= threshold]
        supported = sum(s.right for s in proposed) >= MIN_SUPPORT
        good.append((threshold, supported, not supported or (_precision(proposed, weights) or 0.0) >= TARGET_PRECISION))
    for i, (threshold, supported, _) in enumerate(good):
        if supported and all(ok for _, _, ok in good[i:]):
            return threshold
    return OFF


def cross_fit(samples: list[Sample]) -> dict[str, int]:
    """How the fit does on cases it was not fitted on: the margin is fitted on one half of the cases (by the parity of
    the CRC-32 of the case id) and the other half's lookups at or above it are counted (right, wrong, ``unknown`` cases
    proposed), then the halves swap."""
    counts = {"right": 0, "wrong": 0, "unknown_proposed": 0}
    for half in (0, 1):
        fitted_on = [s for s in samples if zlib.crc32(s.case.encode()) % 2 == half]
        threshold = fit_retrieval_threshold(fitted_on)
        for sample in (s for s in samples if zlib.crc32(s.case.encode()) % 2 != half and s.margin >= threshold):
            key = "right" if sample.right else "unknown_proposed" if sample.kind == "unknown" else "wrong"
            counts[key] += 1
    return counts


def fit(results: list[dict[str, Any]], samples: list[Sample] | None = None) -> dict[str, Any]:
    """The calibration table from ``diagnose eval --json`` results and retrieval samples (never the frozen test split).

    Without ``samples`` (no index), the retrieval threshold is fitted on the dev results' own retrieval notes.
    """
    results = [r for r in results if r.get("split") != "test"]
    scored = [r for r in results if r["got"] not in ("unknown", "error")]
    bands = []
    for low, high in zip(EDGES, (*EDGES[1:], 1.01), strict=True):
        rows = [r for r in scored if low <= r["score"] < high]
        accuracy = (sum(r["correct"] for r in rows) + 1) / (len(rows) + 2)  # rule of succession: no band claims 1.0
        bands.append((low, accuracy, len(rows)))
    kept = [b for b in bands if b[2]]
    smoothed = _monotone([(acc, n) for _, acc, n in kept])
    fitted_on = dev_samples(results) if samples is None else samples
    threshold = fit_retrieval_threshold(fitted_on)
    at = next((row for row in precision_curve(fitted_on, [threshold]) if row["proposed"]), None)
    kinds = {kind: sum(s.kind == kind for s in fitted_on) for kind in ("held-out", "fallback", "unknown")}
    return {
        "fitted_on": f"{len(scored)} eval cases with a diagnosis (rules backend)",
        "bins": [{"min_score": low, "accuracy": round(acc, 3), "cases": n} for (low, _, n), acc in zip(kept, smoothed, strict=True)],
        "retrieval_threshold": threshold,
        "retrieval_fit": {"samples": kinds, "at_threshold": at, "cross_fit": cross_fit(fitted_on)},
    }
