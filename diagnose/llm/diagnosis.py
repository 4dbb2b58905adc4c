"""Ask a model to weigh the rules' candidates, then keep only what grounding accepts. The model may only add.

One short single-shot call: candidates, their entries' key sections, and numbered windows of the
masked log, within a budget sized to the model's context window; the answer is constrained to a
JSON schema and bounded by ``max_tokens``. The model may pick another candidate only when it cites
lines that show it; it never turns a diagnosis into ``unknown``; a rank it names must be the rank of
such a line, and the host follows the rank. Its explanation is shown as the model's, next to the
encyclopedia's mechanism, never instead of it. Any failure (unreachable, late, oversized, malformed
or ungrounded answer) leaves the rules' diagnosis standing, with a note saying why. Only answers
that passed grounding are cached.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from diagnose.encyclopedia.entries import Entry
from diagnose.engine.candidates import Scored
from diagnose.engine.diagnosis import build_diagnosis
from diagnose.errors import LLMError
from diagnose.llm import cache as llm_cache
from diagnose.llm.budget import Budget, answer_schema, plan
from diagnose.llm.client import LLMClient, context_window
from diagnose.llm.failures import ContextOverflow
from diagnose.llm.grounding import ModelAnswer, Rejected, ground, line_rank, supports
from diagnose.llm.prompting import PromptLine, prompt_version, render, to_messages, window_lines
from diagnose.llm.sanitize import UNVERIFIED, model_commands
from diagnose.parse.parsed_log import ParsedLog
from diagnose.schema import Diagnosis, Evidence, LogLine
from diagnose.settings import Settings

MAX_CANDIDATES = 5
MAX_EVIDENCE = 10
HINTED_LINES = 4
MAX_SUGGESTION_CHARS = 300
"""A longer suggested step or command is a model running on, not advice."""


@dataclass
class Prompt:
    """One diagnosis request: the messages, the lines they quote (cited by number), the schema, the allowance."""

    messages: list[dict[str, str]]
    quoted: list[PromptLine]
    candidate_ids: list[str]
    schema: dict[str, Any]
    max_tokens: int


def _anchors(diagnosis: Diagnosis, log: ParsedLog, ranked: list[Scored]) -> list[LogLine]:
    anchors = [LogLine(source=e.file, line=e.line, rank=e.rank, text=e.text) for e in diagnosis.evidence]
    for scored in ranked[:MAX_CANDIDATES]:
        anchors += [f.evidence for f in scored.findings[:2]]
    anchors += [e.anchor for e in log.events if e.kind == "traceback"][:5]
    return anchors


def _shown_by(log: ParsedLog, entry: Entry, lines: list[PromptLine]) -> list[int]:
    """Numbers of the quoted lines that show the entry's failure: the lines a model may cite for it."""
    refs = [line.ref.rpartition(":") for line in lines]
    return [i for i, (source, _, number) in enumerate(refs, 1) if supports(log, entry, (source, int(number)))]


def build_prompt(diagnosis: Diagnosis, log: ParsedLog, ranked: list[Scored], entries: dict[str, Entry], budget: Budget) -> Prompt:
    """The diagnosis request (masked text only).

    Only lines that show one of the candidates can be cited (the schema's enum), and each candidate
    names its lines: even a small model then cannot cite a line that shows nothing.
    """
    top = ranked[: budget.candidates]
    shown_entries = [entries[s.entry_id] for s in top]
    lines = window_lines(log, _anchors(diagnosis, log, ranked), budget.window_tokens)
    shown = {s.entry_id: _shown_by(log, entries[s.entry_id], lines) for s in top}
    candidates = [
        {"id": s.entry_id, "score": s.score, "title": entries[s.entry_id].title, "lines": shown[s.entry_id][:HINTED_LINES]} for s in top
    ]
    rendered = render(
        "diagnose", candidates=candidates, entries=shown_entries, lines=lines, ranks=", ".join(map(str, log.ranks[:64])) or "none"
    )
    ids = [s.entry_id for s in top]
    citable = sorted({n for numbers in shown.values() for n in numbers})
    ranks = [rank for n in citable if (rank := line_rank(log, _ref(lines[n - 1]))) is not None]
    return Prompt(to_messages(rendered), lines, ids, answer_schema(ids, citable, ranks), budget.answer_tokens)


def _ref(line: PromptLine) -> tuple[str, int]:
    source, _, number = line.ref.rpartition(":")
    return source, int(number)


def build_messages(
    diagnosis: Diagnosis, log: ParsedLog, ranked: list[Scored], entries: dict[str, Entry], budget_tokens: int
) -> list[dict[str, str]]:
    """The diagnosis prompt as chat messages, with ``budget_tokens`` of log windows (masked text only)."""
    excerpts = sum(len(entries[s.entry_id].mechanism) + 200 for s in ranked[:MAX_CANDIDATES])
    budget = Budget(window_tokens=max(budget_tokens - excerpts // 4 - 600, 500), answer_tokens=0, candidates=MAX_CANDIDATES, context=0)
    return build_prompt(diagnosis, log, ranked, entries, budget).messages


def _refs(refs: list[tuple[str, int]]) -> str:
    return ", ".join(f"{f}:{n}" for f, n in refs[:3])


def _echoed(text: str, instructions: str) -> bool:
    """True when the model only repeated the prompt (a placeholder such as ``<shell command>``), as small models do."""
    text = text.strip()
    return not text or text.startswith("<") or (len(text) > 3 and text in instructions)


def _apply(
    answer: ModelAnswer,
    rules: Diagnosis,
    log: ParsedLog,
    ranked: list[Scored],
    entries: dict[str, Entry],
    model: str,
    instructions: str = "",
) -> Diagnosis:
    """The rules' diagnosis with what the grounded answer may add: another supported candidate, a cited rank, its explanation."""
    notes = [f"model output dropped: {d}" for d in answer.dropped]
    base = rules
    if answer.root_cause != rules.root_cause.id:
        chosen = sorted(ranked, key=lambda s: s.entry_id != answer.root_cause)
        base = build_diagnosis(log, chosen, entries, None, rules.root_cause.confidence)
        notes.append(f"the model chose {answer.root_cause} over the rules' {rules.root_cause.id}, citing {_refs(answer.supporting)}")
    rank, host = base.initiating_rank, base.initiating_host
    if answer.initiating_rank is not None and answer.initiating_rank != rank:
        cited = [ref for ref in answer.supporting if line_rank(log, ref) == answer.initiating_rank]
        notes.append(
            f"the model placed the first failure on rank {answer.initiating_rank} (citing {_refs(cited)}); "
            f"the rules said rank {rank if rank is not None else 'unknown'}"
        )
        rank, host = answer.initiating_rank, log.hosts.get(answer.initiating_rank)
    shown = {(e.file, e.line) for e in base.evidence}
    added = [
        Evidence(file=f, line=n, rank=line_rank(log, (f, n)), text=log.line_text(f, n) or "")
        for f, n in answer.supporting
        if (f, n) not in shown
    ]
    entry = entries[base.root_cause.id]
    commands = [c for c in answer.commands if not _echoed(c, instructions) and len(c) <= MAX_SUGGESTION_CHARS]
    unverified, dropped = model_commands(commands, {c.strip() for c in entry.fix + entry.verify})
    notes += [f"model-suggested ({UNVERIFIED}, not in the encyclopedia): {c}" for c in unverified] + dropped
    return base.model_copy(
        update={
            "initiating_rank": rank,
            "initiating_host": host,
            "evidence": [*base.evidence, *added][:MAX_EVIDENCE],
            "model_explanation": None if _echoed(answer.explanation, instructions) else answer.explanation,
            "backend": model,
            "notes": [*base.notes, *notes],
        }
    )


def _with_note(rules: Diagnosis, note: str) -> Diagnosis:
    return rules.model_copy(update={"notes": [*rules.notes, note]})


def refine_with_llm(
    rules: Diagnosis, log: ParsedLog, entries: dict[str, Entry], ranked: list[Scored], llm: LLMClient, settings: Settings
) -> Diagnosis:
    """The model's grounded additions, or the rules' diagnosis with a note on why the model's answer was not used."""
    if not ranked:
        return _with_note(rules, "no candidate to weigh; the model was not asked")
    excerpts = sum(len(entries[s.entry_id].mechanism) + 200 for s in ranked[:MAX_CANDIDATES])
    budget = plan(settings, context_window(llm.model, settings.context), excerpts)
    prompt = build_prompt(rules, log, ranked, entries, budget)
    api_base = getattr(llm, "api_base", settings.api_base)
    key = llm_cache.cache_key(
        llm.model, api_base, prompt_version(), prompt.messages, {"schema": prompt.schema, "max_tokens": prompt.max_tokens}
    )
    cached = llm_cache.load(key, settings.llm_cache_days)
    try:
        reply = (
            cached
            if cached is not None
            else llm.complete(prompt.messages, json_mode=True, schema=prompt.schema, max_tokens=prompt.max_tokens)
        )
        answer = ground(reply, log, prompt.candidate_ids, entries, prompt.quoted)
        diagnosis = _apply(answer, rules, log, ranked, entries, llm.model, prompt.messages[0]["content"])
    except ContextOverflow as exc:
        return _with_note(rules, f"{exc}; rules' answer used")
    except LLMError as exc:
        return _with_note(rules, f"model unavailable, rules' answer used: {exc}")
    except Rejected as exc:
        return _with_note(rules, f"model answer rejected ({exc}); rules' answer used")
    if cached is None:
        llm_cache.store(key, reply, settings.llm_cache_days)
    return diagnosis
