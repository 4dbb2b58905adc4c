"""Run the full product path (masking included) over labeled cases and score every one."""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from diagnose.errors import DiagnoseError
from diagnose.evaluation.cases import Case
from diagnose.evaluation.score import CaseResult, leaks, score_case, summarize
from diagnose.parse.ingest import resolve_sources
from diagnose.pipeline import diagnose
from diagnose.schema import Diagnosis, Redactions, RootCause
from diagnose.settings import Settings

if TYPE_CHECKING:
    from diagnose.encyclopedia.index import KBIndex
    from diagnose.llm.client import LLMClient


@dataclass
class RecordingLLM:
    """Wraps a client and keeps every message sent, so leaks to the model are measured."""

    inner: LLMClient
    sent: list[str] = field(default_factory=list)

    @property
    def model(self) -> str:
        """The wrapped model string."""
        return self.inner.model

    def complete(self, messages: list[dict[str, str]], **options: Any) -> str:
        """Record, then delegate."""
        self.sent.extend(m["content"] for m in messages)
        return self.inner.complete(messages, **options)

    def stream(self, messages: list[dict[str, str]], **options: Any) -> Iterator[str]:
        """Record, then delegate."""
        self.sent.extend(m["content"] for m in messages)
        return self.inner.stream(messages, **options)


def run_case(case: Case, settings: Settings, llm: LLMClient | None, index: KBIndex | None) -> CaseResult:
    """Diagnose one case and score it; an error becomes an 'error' outcome, never a crash."""
    recorder = RecordingLLM(llm) if llm is not None else None
    sources = resolve_sources([str(case.log_path)])
    raw_names: dict[str, str] = {}
    started = time.perf_counter()
    try:
        result = diagnose(sources, settings=settings, llm=recorder, index=index)
        diagnosis = result.diagnosis
        raw_names = dict(zip(result.log.sources, (s.name for s in sources), strict=False))
    except DiagnoseError as exc:
        diagnosis = Diagnosis(root_cause=RootCause(id="error", title=str(exc), confidence=0.0), redactions=Redactions(), notes=[str(exc)])
    seconds = time.perf_counter() - started
    leaked = leaks(case.label.secrets, [diagnosis.model_dump_json(), *(recorder.sent if recorder else [])])
    # evidence is cited by masked file name; the labels use the raw names (the eval reads the raw log anyway)
    unmasked = [e.model_copy(update={"file": raw_names.get(e.file, e.file)}) for e in diagnosis.evidence]
    return score_case(case.id, case.label, diagnosis.model_copy(update={"evidence": unmasked}), seconds, leaked)


def run_suite(
    cases: list[Case],
    settings: Settings,
    *,
    llm: LLMClient | None = None,
    index: KBIndex | None = None,
    progress: Callable[[], None] | None = None,
) -> dict[str, Any]:
    """Every case, then the summary (the ``diagnose eval --json`` contract)."""
    results = []
    for case in cases:
        results.append(run_case(case, settings, llm, index))
        if progress:
            progress()
    return summarize(results, llm.model if llm else "rules")


def markdown_report(summary: dict[str, Any]) -> str:
    """A Markdown report: headline figures, per-class accuracy, confusions."""
    lines = [f"# diagnose eval ({summary['backend']})", "", "| metric | value |", "|---|---|"]
    for key in (
        "cases",
        "top1",
        "top3",
        "rank_accuracy",
        "evidence_recall",
        "unknown_precision",
        "unknown_recall",
        "secrets_leaked",
        "latency_p50",
        "latency_p95",
    ):
        lines.append(f"| {key} | {summary[key]} |")
    splits = summary.get("splits", {})
    if splits:
        lines += ["", "| split | cases | top1 | rank_accuracy (proven ranks) | unknown_precision |", "|---|---|---|---|---|"]
        for name, split in splits.items():
            rank = f"{split['rank_accuracy']} ({split['rank_cases']})"
            lines.append(f"| {name} | {split['cases']} | {split['top1']} | {rank} | {split['unknown_precision']} |")
    lines += ["", "| class | cases | accuracy |" + "".join(f" {name} |" for name in splits), "|---|---|---|" + "---|" * len(splits)]
    for cls, row in summary["per_class"].items():
        by_split = "".join(_cell(split["per_class"].get(cls)) for split in splits.values())
        lines.append(f"| {cls} | {row['cases']} | {row['accuracy']} |{by_split}")
    confusion = summary["confusion"]
    if confusion:
        lines += ["", "Confusions (expected -> got):", ""]
        lines += [f"- {c['expected']} -> {c['got']}: {c['count']}" for c in confusion]
    return "\n".join(lines) + "\n"


def _cell(row: dict[str, float] | None) -> str:
    return f" {row['accuracy']} ({row['cases']:g}) |" if row else " |"
