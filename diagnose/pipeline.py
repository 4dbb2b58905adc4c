"""The whole flow in one place: mask -> read -> signatures -> hang reasoning -> retrieval -> candidates -> (LLM) -> Diagnosis.

The only module that wires every stage. ``llm=None`` and ``index=None`` are the supported offline,
rules-only path; ``open_backends`` opens the optional parts the settings ask for.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from diagnose.encyclopedia.entries import load_entries
from diagnose.engine.calibration import confidence
from diagnose.engine.candidates import RETRIEVAL_WEIGHT, Scored, score_candidates
from diagnose.engine.diagnosis import build_diagnosis
from diagnose.engine.fallbacks import is_retrieved, when_nothing_found
from diagnose.engine.fr_combine import combine, sync_ranks
from diagnose.engine.fr_facts import facts
from diagnose.engine.fr_models import FRFacts
from diagnose.engine.hangs import analyse_hang
from diagnose.engine.signatures import SignatureRules
from diagnose.engine.tie_breaks import break_ties
from diagnose.errors import InputError
from diagnose.parse.flight_recorder import read_dumps
from diagnose.parse.fr_sources import split_sources
from diagnose.parse.ingest import Source, resolve_sources
from diagnose.parse.parsed_log import ParsedLog
from diagnose.parse.reader import LogReader
from diagnose.schema import Diagnosis, Redactions
from diagnose.settings import Settings, load_settings

if TYPE_CHECKING:
    from diagnose.chat.session import Responder
    from diagnose.encyclopedia.index import KBIndex
    from diagnose.llm.client import LLMClient


@dataclass
class Result:
    """A diagnosis and the masked log it was made from (for chat and prompts)."""

    diagnosis: Diagnosis
    log: ParsedLog
    redactor_state: dict[str, Any] | None = None
    """The log's masking state (``Redactor.export_state()``: JSON-safe, raw values only as keyed hashes),
    so a chat masks questions with the log's placeholders; None when the redactor cannot export it."""
    flight_recorder: FRFacts | None = None
    """What the Flight Recorder dumps in the input say (verdict, per-rank answers for chat); None without dumps."""


def diagnose(
    sources: Iterable[Source | str | Path],
    *,
    settings: Settings | None = None,
    llm: LLMClient | None = None,
    index: KBIndex | None = None,
    progress: Callable[[int], None] | None = None,
) -> Result:
    """Diagnose one run's logs (sources, or paths: files, directories of per-rank logs, ``-`` for stdin).

    Raw text is masked before anything else reads it. Without ``llm`` and ``index`` this is the
    offline, rules-only path.
    """
    from redaction import Redactor

    settings = settings or load_settings()
    resolved = [item for s in sources for item in ([s] if isinstance(s, Source) else resolve_sources([str(s)]))]
    entries = {entry.id: entry for entry in load_entries(settings.kb_dir)}
    rules = SignatureRules(list(entries.values()))
    logs, dump_files = split_sources(resolved)  # Flight Recorder dumps (and archives of a run) are not text logs
    redactor = Redactor()  # one redactor for logs and dumps, so their placeholders agree
    log = LogReader(rules, redactor, progress).read(logs)
    dumps = read_dumps(dump_files, redactor) if dump_files else []
    if dumps:  # what masking the dumps replaced counts too
        log.redactions = Redactions(total=sum(redactor.counts.values()), by_type=dict(redactor.counts))
    if not log.has_text and not dumps:
        raise InputError("the log is empty")
    hang = analyse_hang(log)
    ranked = break_ties(score_candidates(log, entries, hang), log)
    if index is not None and _retrieval_can_change(ranked):
        from diagnose.encyclopedia.retrieval import similarity_by_entry

        ranked = break_ties(score_candidates(log, entries, hang, similarity_by_entry(log, index)), log)
    notes: list[str] = []
    if not ranked and log.has_text:  # no signature named a cause: the launcher's teardown alone, then the nearest encyclopedia example
        ranked, notes = when_nothing_found(log, entries, index)
    top = ranked[0] if ranked else None
    calibrated = confidence(top.score, retrieved=is_retrieved(top)) if top is not None else 0.0
    diagnosis = build_diagnosis(log, ranked, entries, hang, calibrated, notes)
    if llm is not None and log.has_text:
        from diagnose.llm.diagnosis import refine_with_llm

        diagnosis = refine_with_llm(diagnosis, log, entries, ranked, llm, settings)
    recorded = facts(dumps) if dumps else None
    if recorded is not None:  # the log's error on a rank the dumps name wins; the dumps explain a silent hang
        diagnosis = combine(diagnosis, recorded.verdict, entries, log.hosts)
    export = getattr(redactor, "export_state", None)
    return Result(sync_ranks(diagnosis), log, export() if export is not None else None, recorded)


def _retrieval_can_change(ranked: list[Scored]) -> bool:
    """Whether similarity could change the answer: two candidates closer than its weight (the index is consulted only then)."""
    return len(ranked) >= 2 and ranked[0].score - ranked[1].score <= RETRIEVAL_WEIGHT


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
    return open_llm(settings), index


def chat_responder(llm: LLMClient | None) -> Responder:
    """Who answers follow-up questions: the model (checked, with the offline answer as fallback) or the offline answers."""
    if llm is None:
        from diagnose.chat.offline import offline_responder  # imported when a chat starts, not by every diagnosis

        return offline_responder
    from diagnose.llm.chat import llm_responder

    return llm_responder(llm)
