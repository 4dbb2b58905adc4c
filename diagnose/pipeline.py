"""The whole flow in one place: mask -> read -> signatures -> hang reasoning -> retrieval -> candidates -> (LLM) -> Diagnosis.

The only module that wires every stage. ``llm=None`` and ``index=None`` are the supported offline,
rules-only path; ``open_backends`` opens the optional parts the settings ask for.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from diagnose.chat.offline import offline_responder
from diagnose.chat.session import Responder
from diagnose.encyclopedia.entries import load_entries
from diagnose.engine.calibration import confidence
from diagnose.engine.candidates import score_candidates
from diagnose.engine.diagnosis import build_diagnosis
from diagnose.engine.hangs import analyse_hang
from diagnose.engine.signatures import SignatureRules
from diagnose.engine.tie_breaks import break_ties
from diagnose.errors import InputError
from diagnose.parse.ingest import Source, resolve_sources
from diagnose.parse.parsed_log import ParsedLog
from diagnose.parse.reader import LogReader
from diagnose.schema import Diagnosis
from diagnose.settings import Settings, load_settings

if TYPE_CHECKING:
    from diagnose.encyclopedia.index import KBIndex
    from diagnose.llm.client import LLMClient


@dataclass
class Result:
    """A diagnosis and the masked log it was made from (for chat and prompts)."""

    diagnosis: Diagnosis
    log: ParsedLog


def diagnose(sources: Iterable[Source | str | Path], *, settings: Settings | None = None, llm: LLMClient | None = None,
             index: KBIndex | None = None, progress: Callable[[int], None] | None = None) -> Result:
    """Diagnose one run's logs (sources, or paths: files, directories of per-rank logs, ``-`` for stdin).

    Raw text is masked before anything else reads it. Without ``llm`` and ``index`` this is the
    offline, rules-only path.
    """
    from redaction import Redactor

    settings = settings or load_settings()
    resolved = [item for s in sources for item in ([s] if isinstance(s, Source) else resolve_sources([str(s)]))]
    entries = {entry.id: entry for entry in load_entries(settings.kb_dir)}
    rules = SignatureRules(list(entries.values()))
    log = LogReader(rules, Redactor(), progress).read(resolved)
    if not log.has_text:
        raise InputError("the log is empty")
    hang = analyse_hang(log)
    retrieved: dict[str, float] = {}
    if index is not None:
        from diagnose.encyclopedia.retrieval import similarity_by_entry

        retrieved = similarity_by_entry(log, index)
    ranked = break_ties(score_candidates(log, entries, hang, retrieved), log)
    diagnosis = build_diagnosis(log, ranked, entries, hang, confidence(ranked[0].score if ranked else 0.0))
    if llm is not None:
        from diagnose.llm.diagnosis import refine_with_llm

        diagnosis = refine_with_llm(diagnosis, log, entries, ranked, llm, settings)
    return Result(diagnosis, log)


def open_llm(settings: Settings) -> LLMClient | None:
    """The LLM client when a model is configured, else None (rules only)."""
    if not settings.model:
        return None
    from diagnose.llm.client import LiteLLMClient

    return LiteLLMClient(settings)


def open_backends(settings: Settings) -> tuple[LLMClient | None, KBIndex | None]:
    """(llm, index): each None when not configured or turned off (``model``, ``retrieval``)."""
    index = None
    if settings.retrieval:
        from diagnose.encyclopedia.index import open_index

        index = open_index(settings)
        index.ensure()
    return open_llm(settings), index


def chat_responder(llm: LLMClient | None) -> Responder:
    """Who answers follow-up questions: the model (checked, with the offline answer as fallback) or the offline answers."""
    if llm is None:
        return offline_responder
    from diagnose.llm.chat import llm_responder

    return llm_responder(llm)
