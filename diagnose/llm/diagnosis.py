"""Ask a model to improve the rules' diagnosis, then keep only what grounding accepts.

One short single-shot call: candidates, their entries' key sections, and windows of the
masked log around the events, within the token budget. Any failure (unreachable model,
malformed or ungrounded answer) leaves the rules' diagnosis standing, with a note saying so.
"""

from __future__ import annotations

from diagnose.encyclopedia.entries import Entry
from diagnose.engine.candidates import Scored
from diagnose.engine.diagnosis import build_diagnosis
from diagnose.errors import LLMError
from diagnose.llm import cache as llm_cache
from diagnose.llm.client import LLMClient
from diagnose.llm.grounding import ModelAnswer, Rejected, ground
from diagnose.llm.prompting import prompt_version, render, to_messages, window_lines
from diagnose.parse.parsed_log import ParsedLog
from diagnose.schema import Candidate, Diagnosis, Evidence, LogLine
from diagnose.settings import Settings

MAX_CANDIDATES = 5


def _anchors(diagnosis: Diagnosis, log: ParsedLog, ranked: list[Scored]) -> list[LogLine]:
    anchors = [LogLine(source=e.file, line=e.line, rank=e.rank, text=e.text) for e in diagnosis.evidence]
    for scored in ranked[:MAX_CANDIDATES]:
        anchors += [f.evidence for f in scored.findings[:2]]
    anchors += [e.anchor for e in log.events if e.kind == "traceback"][:5]
    return anchors


def build_messages(diagnosis: Diagnosis, log: ParsedLog, ranked: list[Scored], entries: dict[str, Entry],
                   budget_tokens: int) -> list[dict[str, str]]:
    """The diagnosis prompt as chat messages (masked text only)."""
    top = ranked[:MAX_CANDIDATES]
    shown_entries = [entries[s.entry_id] for s in top]
    context_tokens = sum(len(e.mechanism) + 200 for e in shown_entries) // 4 + 600
    lines = window_lines(log, _anchors(diagnosis, log, ranked), max(budget_tokens - context_tokens, 500))
    candidates = [{"id": s.entry_id, "score": s.score, "title": entries[s.entry_id].title} for s in top]
    rendered = render("diagnose", candidates=candidates, entries=shown_entries, lines=lines,
                      ranks=", ".join(map(str, log.ranks[:64])) or "none")
    return to_messages(rendered)


def _apply(answer: ModelAnswer, rules: Diagnosis, log: ParsedLog, ranked: list[Scored],
           entries: dict[str, Entry], model: str) -> Diagnosis:
    if answer.root_cause == "unknown":
        chosen: list[Scored] = []
    else:
        chosen = sorted(ranked, key=lambda s: s.entry_id != answer.root_cause)
    base = rules if chosen and chosen[0].entry_id == rules.root_cause.id else build_diagnosis(
        log, chosen, entries, None, rules.root_cause.confidence)
    cited = [Evidence(file=f, line=n, rank=None, text=log.line_text(f, n) or "") for f, n in answer.evidence]
    evidence = cited + [e for e in base.evidence if (e.file, e.line) not in set(answer.evidence)]
    notes = [f"model output dropped: {d}" for d in answer.dropped]
    notes += [f"model-suggested (not in the encyclopedia, check before running): {c}" for c in answer.suggested]
    return base.model_copy(update={
        "initiating_rank": answer.initiating_rank if answer.initiating_rank is not None else base.initiating_rank,
        "evidence": evidence[:10],
        "mechanism": answer.explanation or base.mechanism,
        "backend": model,
        "candidates": [Candidate(id=s.entry_id, score=s.score) for s in chosen] or base.candidates,
        "notes": [*base.notes, *notes],
    })


def refine_with_llm(rules: Diagnosis, log: ParsedLog, entries: dict[str, Entry], ranked: list[Scored],
                    llm: LLMClient, settings: Settings) -> Diagnosis:
    """The model's grounded diagnosis, or the rules' one with a note on why the model's was not used."""
    if not ranked:
        return rules.model_copy(update={"notes": [*rules.notes, "no candidate to weigh; the model was not asked"]})
    messages = build_messages(rules, log, ranked, entries, settings.token_budget)
    key = llm_cache.cache_key(llm.model, prompt_version(), messages)
    reply = llm_cache.load(key)
    try:
        if reply is None:
            reply = llm.complete(messages, json_mode=True)
        answer = ground(reply, log, [s.entry_id for s in ranked], entries)
    except LLMError as exc:
        return rules.model_copy(update={"notes": [*rules.notes, f"model unavailable, rules' answer used: {exc}"]})
    except Rejected as exc:
        return rules.model_copy(update={"notes": [*rules.notes, f"model answer rejected ({exc}); rules' answer used"]})
    llm_cache.store(key, reply)
    return _apply(answer, rules, log, ranked, entries, llm.model)
