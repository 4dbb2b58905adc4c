"""The whole flow in one place: mask -> read -> rules -> hang reasoning -> retrieval -> candidates -> (LLM) -> Diagnosis.

The only module that imports every stage. ``llm=None`` and ``index=None`` are the
supported offline, rules-only path.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import TYPE_CHECKING

from diagnose.assemble import build_diagnosis
from diagnose.calibration import confidence
from diagnose.candidates import score_candidates
from diagnose.discriminate import break_ties
from diagnose.errors import InputError
from diagnose.hangs import analyse_hang
from diagnose.ingest import Source
from diagnose.kb import load_entries
from diagnose.parse.model import ParsedLog
from diagnose.parse.reader import LogReader
from diagnose.rules import SignatureRules
from diagnose.schema import Diagnosis
from diagnose.settings import Settings

if TYPE_CHECKING:
    from diagnose.index import KBIndex
    from diagnose.llm import LLMClient


@dataclass
class Result:
    """A diagnosis and the masked log it was made from (for chat and prompts)."""

    diagnosis: Diagnosis
    log: ParsedLog


def diagnose(sources: Iterable[Source], *, settings: Settings, llm: LLMClient | None = None,
             index: KBIndex | None = None, progress: Callable[[int], None] | None = None) -> Result:
    """Diagnose one run's logs. Raw text is masked before anything else reads it."""
    from redaction import Redactor

    entries = {entry.id: entry for entry in load_entries(settings.kb_dir)}
    rules = SignatureRules(list(entries.values()))
    log = LogReader(rules, Redactor(), progress).read(sources)
    if not log.has_text:
        raise InputError("the log is empty")
    hang = analyse_hang(log)
    retrieved: dict[str, float] = {}
    if index is not None:
        from diagnose.retrieval_boost import similarity_by_entry

        retrieved = similarity_by_entry(log, index)
    ranked = break_ties(score_candidates(log, entries, hang, retrieved), log)
    diagnosis = build_diagnosis(log, ranked, entries, hang, confidence(ranked[0].score if ranked else 0.0))
    if llm is not None:
        from diagnose.llm_diagnose import refine_with_llm

        diagnosis = refine_with_llm(diagnosis, log, entries, ranked, llm, settings)
    return Result(diagnosis, log)
