"""Scoring: pure functions from (label, diagnosis) results to the suite's figures. No LLM judge."""

from __future__ import annotations

import re
import statistics
from collections import Counter
from pathlib import PurePath
from typing import Any

from pydantic import BaseModel, Field

from diagnose.evaluation.cases import Label
from diagnose.schema import Diagnosis


class CaseResult(BaseModel):
    """One case's outcome."""

    id: str
    split: str = "synthetic"
    expected: str
    got: str
    top3: list[str]
    correct: bool
    in_top3: bool
    expected_rank: int | None
    got_rank: int | None
    rank_correct: bool | None
    evidence_found: int
    evidence_total: int
    leaked: list[str] = Field(default_factory=list)
    seconds: float
    score: float = Field(description="the top candidate's raw score (0 for unknown)")
    backend: str
    notes: list[str] = Field(default_factory=list)


_DIRECTORY = re.compile(r"(?:/[\w.+-]+)+")
"""A planted home or scratch directory (``/p/home/jusers/mueller7``): its last component is the person."""


def _runs(secret: str) -> list[str]:
    if len(secret) < 20:
        return [secret]
    if _DIRECTORY.fullmatch(secret):  # a run of its parent folders is no leak: the whole path, or the user's name alone
        return [secret, secret.rsplit("/", 1)[1]]
    return [secret[i : i + 12] for i in range(len(secret) - 11)]


def leaks(secrets: list[str], texts: list[str]) -> list[str]:
    """Planted secrets that appear in any text: whole, or as any 12-character run of a secret of 20+ (of a long directory: its
    last component, the user's name)."""
    found: list[str] = []
    blob = "\n".join(texts)
    for secret in secrets:
        if any(run in blob for run in _runs(secret)):
            found.append(secret)
    return found


def _evidence_hits(label: Label, diagnosis: Diagnosis) -> tuple[int, int]:
    cited = {(PurePath(e.file).name, e.line) for e in diagnosis.evidence}
    cited_lines = {e.line for e in diagnosis.evidence}
    hits = 0
    for item in label.evidence:
        if isinstance(item, int) or str(item).isdigit():
            hits += int(item) in cited_lines
        else:
            path, _, number = str(item).rpartition(":")
            hits += (PurePath(path).name, int(number)) in cited
    return hits, len(label.evidence)


def score_case(case_id: str, label: Label, diagnosis: Diagnosis, seconds: float, leaked: list[str]) -> CaseResult:
    """The outcome of one case."""
    accepted = {label.class_, *label.accept}
    got = diagnosis.root_cause.id
    top3 = [c.id for c in diagnosis.candidates[:3]] or [got]
    found, total = _evidence_hits(label, diagnosis)
    proven = label.proven_rank
    rank_correct = None if proven is None else diagnosis.initiating_rank == proven
    return CaseResult(
        id=case_id,
        split=label.split_name,
        expected=label.class_,
        got=got,
        top3=top3,
        correct=got in accepted,
        in_top3=bool(accepted & set(top3)) or got in accepted,
        expected_rank=label.initiating_rank,
        got_rank=diagnosis.initiating_rank,
        rank_correct=rank_correct,
        evidence_found=found,
        evidence_total=total,
        leaked=leaked,
        seconds=round(seconds, 4),
        score=diagnosis.candidates[0].score if diagnosis.candidates else 0.0,
        backend=diagnosis.backend,
        notes=diagnosis.notes,
    )


def _percentile(values: list[float], q: float) -> float:
    if not values:
        return 0.0
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(q * (len(ordered) - 1)))]


def summarize(results: list[CaseResult], backend: str) -> dict[str, Any]:
    """The suite's figures, with per-case results (the --json contract of ``diagnose eval``), and each split's figures."""
    summary = figures(results, backend)
    summary["splits"] = {
        name: figures([r for r in results if r.split == name], backend) for name in SPLIT_ORDER if any(r.split == name for r in results)
    }
    summary["results"] = [r.model_dump() for r in results]
    return summary


SPLIT_ORDER = ("synthetic", "dev", "test")
HIDDEN_SPLITS = frozenset({"test"})
"""Splits whose cases are never named in a comparison: only their aggregate figures are read."""


def figures(results: list[CaseResult], backend: str) -> dict[str, Any]:
    """The figures of a set of results: top-1, rank accuracy (proven ranks only), unknown precision, per class."""
    n = len(results)
    ranked = [r for r in results if r.rank_correct is not None]
    per_class: dict[str, dict[str, float]] = {}
    for cls in sorted({r.expected for r in results}):
        rows = [r for r in results if r.expected == cls]
        per_class[cls] = {"cases": len(rows), "accuracy": round(sum(r.correct for r in rows) / len(rows), 3)}
    confusion = Counter((r.expected, r.got) for r in results if not r.correct and r.split not in HIDDEN_SPLITS)
    said_unknown = [r for r in results if r.got == "unknown"]
    is_unknown = [r for r in results if r.expected == "unknown"]
    evidence_total = sum(r.evidence_total for r in results)
    seconds = [r.seconds for r in results]
    return {
        "cases": n,
        "top1": round(sum(r.correct for r in results) / n, 3) if n else 0.0,
        "top3": round(sum(r.in_top3 for r in results) / n, 3) if n else 0.0,
        "per_class": per_class,
        "confusion": [{"expected": e, "got": g, "count": c} for (e, g), c in confusion.most_common()],
        "rank_accuracy": round(sum(bool(r.rank_correct) for r in ranked) / len(ranked), 3) if ranked else None,
        "rank_cases": len(ranked),
        "evidence_recall": round(sum(r.evidence_found for r in results) / evidence_total, 3) if evidence_total else None,
        "unknown_precision": round(sum(r.correct for r in said_unknown) / len(said_unknown), 3) if said_unknown else None,
        "unknown_recall": round(sum(r.got == "unknown" for r in is_unknown) / len(is_unknown), 3) if is_unknown else None,
        "counts": {
            "correct": sum(r.correct for r in results),
            "rank_correct": sum(bool(r.rank_correct) for r in ranked),
            "said_unknown": len(said_unknown),
            "wrong_unknown": sum(not r.correct for r in said_unknown),
        },
        "secrets_leaked": sum(len(r.leaked) for r in results),
        "latency_p50": round(statistics.median(seconds), 4) if seconds else 0.0,
        "latency_p95": round(_percentile(seconds, 0.95), 4),
        "backend": backend,
    }


def compare(current: dict[str, Any], baseline: dict[str, Any]) -> list[str]:
    """Case-by-case changes against a baseline run: what got better and what got worse."""
    before = {r["id"]: r for r in baseline.get("results", [])}
    lines: list[str] = []
    hidden: Counter[str] = Counter()
    for row in current.get("results", []):
        old = before.get(row["id"])
        if row.get("split") in HIDDEN_SPLITS:
            if old is not None and old["correct"] != row["correct"]:
                hidden[f"{row['split']}: {'better' if row['correct'] else 'WORSE'}"] += 1
            continue
        if old is None:
            lines.append(f"new    {row['id']}: {row['got']} (expected {row['expected']})")
        elif old["correct"] != row["correct"]:
            verb = "better" if row["correct"] else "WORSE "
            lines.append(f"{verb} {row['id']}: {old['got']} -> {row['got']} (expected {row['expected']})")
        elif old.get("rank_correct") != row.get("rank_correct") and row.get("rank_correct") is not None:
            verb = "better" if row["rank_correct"] else "WORSE "
            lines.append(f"{verb} {row['id']}: rank {old.get('got_rank')} -> {row['got_rank']} (expected {row['expected_rank']})")
    lines += [f"{what}: {count} case(s)" for what, count in sorted(hidden.items())]
    for key in ("top1", "top3", "rank_accuracy", "evidence_recall", "secrets_leaked"):
        lines.append(f"{key}: {baseline.get(key)} -> {current.get(key)}")
    for name, split in current.get("splits", {}).items():
        old_split = baseline.get("splits", {}).get(name, {})
        lines.append(f"{name}: " + ", ".join(f"{key} {old_split.get(key)} -> {split.get(key)}" for key in GATED))
    return lines


GATED = ("top1", "rank_accuracy", "unknown_precision")
"""The aggregate figures the CI gate holds each split to."""


def baseline_record(summary: dict[str, Any]) -> dict[str, Any]:
    """What ``evals/baseline.json`` keeps: each split's gated figures and case counts, and each case's pass/fail."""
    keep = ("cases", *GATED, "rank_cases", "counts", "top3", "unknown_recall", "secrets_leaked", "per_class")
    record: dict[str, Any] = {key: summary[key] for key in keep}
    record["backend"] = summary["backend"]
    record["splits"] = {name: {key: split[key] for key in keep} for name, split in summary["splits"].items()}
    record["results"] = [
        {key: r[key] for key in ("id", "split", "expected", "got", "correct", "expected_rank", "got_rank", "rank_correct")}
        for r in summary["results"]
    ]
    return record
