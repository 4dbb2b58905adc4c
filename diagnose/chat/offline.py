"""Offline answers to follow-up questions: an intent recognised from the question, answered from grounded sources.

Each answer cites the masked log and the encyclopedia; with no model configured this is the chat.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator

from diagnose.chat.session import Answer, ChatSession, Citation
from diagnose.encyclopedia.entries import Entry, get_entry, load_entries
from diagnose.parse.lines import make_line
from diagnose.schema import Diagnosis, LogLine

CITED_SECTION_CHARS = 400
QUOTED_LINE_CHARS = 240
CLOSEST_LINE_CHARS = 160


def _entry(diagnosis: Diagnosis) -> Entry | None:
    try:
        return get_entry(diagnosis.root_cause.id)
    except Exception:  # unknown, or an entry removed since
        return None


def _kb(entry: Entry, section: str) -> Citation:
    return Citation(kind="kb", entry_id=entry.id, section=section, text=entry.section(section)[:CITED_SECTION_CHARS])


def _evidence_citations(diagnosis: Diagnosis) -> list[Citation]:
    return [Citation(kind="log", file=e.file, line=e.line, rank=e.rank, text=e.text) for e in diagnosis.evidence]


def _why_rank(session: ChatSession, question: str) -> Answer:
    d = session.diagnosis
    if d.initiating_rank is None:
        return Answer(answer="The log does not show which rank started the failure. " + _next_run_hint(d),
                      citations=_evidence_citations(d))
    if d.hang_reasoning:  # a stalled rank prints no error: the timeouts of the others point at it
        lines = [f"Rank {d.initiating_rank} is the one the others were waiting for: {d.hang_reasoning}."]
    else:
        lines = [f"Rank {d.initiating_rank} is where the failure started: its first failing line comes before the "
                 "other ranks' errors, and theirs are consequences."]
    for other in sorted({int(n) for n in re.findall(r"rank\s*(\d+)", question)} - {d.initiating_rank}):
        groups = [c for c in d.collateral if other in c.ranks]
        role = "; ".join(c.summary for c in groups) or "no failure of its own"
        lines.append(f"Rank {other} shows only collateral: {role}.")
    for group in d.collateral:
        lines.append(f"Collateral: {group.summary}.")
    return Answer(answer="\n".join(lines), citations=_evidence_citations(d))


def _hardware_or_code(session: ChatSession, question: str) -> Answer:
    entry = _entry(session.diagnosis)
    if entry is None:
        return _fallback(session, question)
    hardware = {"hardware", "gpu-hardware", "driver", "network", "infrastructure", "infra", "scheduler"} & set(entry.tags)
    verdict = ("This points at the machine or the environment, not your training code"
               if hardware else "This is most likely in your code, data or configuration rather than the hardware")
    return Answer(answer=f"{verdict} ({entry.title}; tags: {', '.join(entry.tags)}).\n\n{entry.mechanism}",
                  citations=[_kb(entry, "Why it happens"), _kb(entry, "How to confirm"), *_evidence_citations(session.diagnosis)[:2]])


def _fix(session: ChatSession, question: str) -> Answer:
    d, entry = session.diagnosis, _entry(session.diagnosis)
    if entry is None or not d.fix:
        return _fallback(session, question)
    return Answer(answer="\n".join(f"{i}. {step}" for i, step in enumerate(d.fix, 1)), citations=[_kb(entry, "Fix")])


def _verify(session: ChatSession, question: str) -> Answer:
    d, entry = session.diagnosis, _entry(session.diagnosis)
    if entry is None or not d.verify:
        return _fallback(session, question)
    return Answer(answer="Run these to verify:\n" + "\n".join(f"$ {c}" for c in d.verify), citations=[_kb(entry, "Verify")])


def _alternatives(session: ChatSession, question: str) -> Answer:
    d, entry = session.diagnosis, _entry(session.diagnosis)
    others = [c for c in d.candidates if c.id != d.root_cause.id]
    parts = [f"- {c.id} (score {c.score:.2f})" for c in others]
    citations: list[Citation] = []
    if entry is not None:
        parts += [f"- related: {r}" for r in entry.related]
        citations.append(_kb(entry, "Related"))
    text = "Other explanations considered:\n" + "\n".join(parts) if parts else "No other candidate matched this log."
    return Answer(answer=text, citations=citations)


def _evidence(session: ChatSession, question: str) -> Answer:
    d = session.diagnosis
    if not d.evidence:
        return Answer(answer="No evidence lines were kept for this diagnosis.", citations=[])
    body = "\n".join(f"{e.file}:{e.line} (rank {e.rank}) {e.text.strip()[:QUOTED_LINE_CHARS]}" for e in d.evidence)
    return Answer(answer=body, citations=_evidence_citations(d))


def _lines_around(session: ChatSession, question: str) -> Answer:
    log = session.log
    match = re.search(r"line\s*(\d+)", question)
    number = int(match.group(1)) if match else 0
    source = session.diagnosis.evidence[0].file if session.diagnosis.evidence else (log.sources or [""])[0]
    cites = []
    for n in range(max(1, number - 5), number + 6):
        text = log.line_text(source, n)
        if text is not None:
            cites.append(Citation(kind="log", file=source, line=n, text=text))
    if not cites:
        span = f"lines 1-{log.line_count}" if log.complete else "the windows kept around events"
        return Answer(answer=f"Line {number} of {source} is not in the log ({span} searched).", citations=[], grounded=False)
    return Answer(answer="\n".join(f"{c.line:>6}  {c.text}" for c in cites), citations=cites)


def _rank_lines(session: ChatSession, question: str) -> Answer:
    rank = int(re.search(r"rank\s*(\d+)", question).group(1))  # type: ignore[union-attr]
    log = session.log
    found = [f.evidence for f in log.findings if f.rank == rank]
    found += [line for e in log.events if e.rank == rank for line in e.lines[-1:]]
    found = sorted({(line.source, line.line): line for line in found}.values(), key=lambda x: (x.source, x.line))[:15]
    if not found:
        ranks = f"ranks {log.ranks[0]}-{log.ranks[-1]}" if log.ranks else "no ranks"
        return Answer(answer=f"No error or event lines on rank {rank} (searched {ranks}, {log.line_count} lines).",
                      citations=[], grounded=False)
    cites = [Citation(kind="log", file=line.source, line=line.line, rank=rank, text=line.text) for line in found]
    return Answer(answer="\n".join(f"{c.file}:{c.line}  {c.text.strip()[:QUOTED_LINE_CHARS]}" for c in cites), citations=cites)


def _next_run_hint(d: Diagnosis) -> str:
    return ("Before the next run: " + "; ".join(d.next_run[:3])) if d.next_run else ""


def _next_run(session: ChatSession, question: str) -> Answer:
    d, entry = session.diagnosis, _entry(session.diagnosis)
    if not d.next_run:
        return _fallback(session, question)
    cites = [_kb(entry, "Before the next run")] if entry else []
    return Answer(answer="Turn these on before the next run:\n" + "\n".join(f"- {x}" for x in d.next_run), citations=cites)


def _words(text: str) -> set[str]:
    return {w for w in re.findall(r"[a-z][a-z0-9_]{3,}", text.lower())}


def _fallback(session: ChatSession, question: str) -> Answer:
    """No intent recognised: the closest encyclopedia sections and matching log lines, labeled as such."""
    words = _words(question)
    scored: list[tuple[int, Entry, str]] = []
    for entry in load_entries():
        for name, body in entry.sections.items():
            overlap = len(words & _words(body + " " + entry.title))
            if overlap:
                scored.append((overlap, entry, name))
    scored.sort(key=lambda item: -item[0])
    citations = [_kb(entry, name) for _, entry, name in scored[:3]]
    log_hits = [line for line in session.log.excerpts if words & _words(line.text)]
    for kept_source, kept_lines in session.log.lines.items():
        log_hits += [_as_line(kept_source, i, t) for i, t in enumerate(kept_lines, 1) if words & _words(t)][:5]
    citations += [Citation(kind="log", file=x.source, line=x.line, rank=x.rank, text=x.text) for x in log_hits[:5]]
    if not citations:
        return Answer(answer="I could not find anything about that in this log or the encyclopedia.", grounded=False)
    parts = ["I have no direct answer; here is the closest material (not a diagnosis):"]
    parts += [f"- encyclopedia {c.entry_id} / {c.section}" for c in citations if c.kind == "kb"]
    parts += [f"- {c.file}:{c.line} {c.text.strip()[:CLOSEST_LINE_CHARS]}" for c in citations if c.kind == "log"]
    return Answer(answer="\n".join(parts), citations=citations, grounded=False)


def _as_line(source: str, number: int, text: str) -> LogLine:
    return make_line(source, number, text)


INTENTS: list[tuple[re.Pattern[str], Callable[[ChatSession, str], Answer]]] = [
    (re.compile(r"\blines? (?:around|near|at)\b|\bline \d+", re.I), _lines_around),
    (re.compile(r"\bwhy\b.*\brank\b|\bwhich rank\b", re.I), _why_rank),
    (re.compile(r"\bhardware\b|\bmy code\b|\bbug in\b", re.I), _hardware_or_code),
    (re.compile(r"\bverif|\bcheck (?:it|the fix)|\bconfirm\b", re.I), _verify),
    (re.compile(r"\bfix\b|\bsolve\b|\bresolve\b|\bwhat should i do\b", re.I), _fix),
    (re.compile(r"\bwhat else\b|\balternativ|\bother (?:cause|explanation|candidate)", re.I), _alternatives),
    (re.compile(r"\bevidence\b|\bshow (?:me )?the (?:lines|errors)\b|\bproof\b", re.I), _evidence),
    (re.compile(r"\bon rank \d+|\brank \d+ (?:lines|output|log)", re.I), _rank_lines),
    (re.compile(r"\bnext time\b|\bnext run\b|\bturn on\b|\bwhat should i log\b|\bmore (?:info|logging)\b", re.I), _next_run),
]


def answer_offline(session: ChatSession, question: str) -> Answer:
    """Answer a follow-up from the session's masked log and the encyclopedia, citing sources."""
    for pattern, handler in INTENTS:
        if pattern.search(question):
            return handler(session, question)
    return _fallback(session, question)


def offline_responder(session: ChatSession, question: str) -> Iterator[str | Answer]:
    """The offline answer, streamed word by word."""
    result = answer_offline(session, question)
    yield from re.findall(r"\S+\s*", result.answer)
    yield result
