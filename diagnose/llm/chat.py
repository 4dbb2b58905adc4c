"""Follow-up answers from a model: the same grounded context plus the history, streamed.

Citations in the model's text (``[file:line]``, ``[kb:id#Section]``) are checked against the
log and the encyclopedia; the ones that do not exist are reported, never passed on as sources.
The model's text is cleaned as it streams (no control sequences, no command piped into a shell);
the prompt's turns alternate, as strict chat templates demand. If the model cannot be reached, or
answers nothing, the offline answer is given with a note; a cut answer is kept with a note.
"""

from __future__ import annotations

import re
from collections.abc import Iterator

from diagnose.chat.offline import CITED_SECTION_CHARS, answer_offline
from diagnose.chat.session import Answer, ChatSession, Citation, Responder
from diagnose.encyclopedia.entries import get_entry
from diagnose.errors import KBError, LLMError
from diagnose.llm.client import LLMClient
from diagnose.llm.failures import Cut
from diagnose.llm.prompting import alternate, render, to_messages, window_lines
from diagnose.llm.sanitize import StreamCleaner
from diagnose.schema import LogLine
from diagnose.settings import Settings

HISTORY_TURNS = 6
DEFAULT_BUDGET = 4000
FAST_BUDGET = 1500
ANSWER_TOKENS = 700
FAST_ANSWER_TOKENS = 350
SECTIONS = ("Why it happens", "How to confirm", "Fix", "Verify", "Before the next run")
_LOG_REF = re.compile(r"\[([^\[\]\s:]+(?:/[^\[\]\s:]+)*):(\d+)\]")
_KB_REF = re.compile(r"\[kb:([a-z0-9-]+)(?:#([^\]]+))?\]")


def build_chat_messages(session: ChatSession, question: str, budget_tokens: int = DEFAULT_BUDGET) -> list[dict[str, str]]:
    """The chat prompt (masked text only)."""
    d = session.diagnosis
    try:
        entry = get_entry(d.root_cause.id)
    except KBError:
        entry = None
    anchors = [LogLine(source=e.file, line=e.line, rank=e.rank, text=e.text) for e in d.evidence]
    asked = re.search(r"line\s*(\d+)", question)
    if asked and d.evidence:
        number = int(asked.group(1))
        text = session.log.line_text(d.evidence[0].file, number)
        if text is not None:
            anchors.insert(0, LogLine(source=d.evidence[0].file, line=number, text=text))
    sections = [(name, entry.section(name)[:1500]) for name in SECTIONS] if entry else []
    rendered = render(
        "chat",
        diagnosis=d,
        entry=entry,
        sections=sections,
        lines=window_lines(session.log, anchors, budget_tokens),
    )
    # history and the question are data, added as messages: text in them can never open another role's turn
    turns = [{"role": turn.role, "content": turn.content} for turn in session.history[-HISTORY_TURNS * 2 :]]
    return alternate([*to_messages(rendered), *turns, {"role": "user", "content": question}])


def check_citations(text: str, session: ChatSession) -> tuple[list[Citation], list[str]]:
    """Citations found in a model's answer that exist, and the ones that do not."""
    good: list[Citation] = []
    bad: list[str] = []
    for source, number in _LOG_REF.findall(text):
        line = session.log.line_text(source, int(number))
        if line is None:
            bad.append(f"{source}:{number}")
        else:
            good.append(Citation(kind="log", file=source, line=int(number), text=line))
    for entry_id, section in _KB_REF.findall(text):
        try:
            entry = get_entry(entry_id)
        except KBError:
            bad.append(f"kb:{entry_id}")
            continue
        name = section if section in entry.sections else None
        good.append(Citation(kind="kb", entry_id=entry_id, section=name, text=entry.section(name or "What it is")[:CITED_SECTION_CHARS]))
    return good, bad


def _offline(session: ChatSession, question: str, why: str, shown: bool) -> Iterator[str | Answer]:
    """The offline answer, with a note on why the model's was not used."""
    offline = answer_offline(session, question)
    note = f"\n\n({why}; answered from the encyclopedia and the log)"
    yield ("\n" if shown else "") + offline.answer + note
    yield Answer(answer=offline.answer + note, citations=offline.citations, grounded=offline.grounded)


def _known_commands(session: ChatSession) -> set[str]:
    return {c.strip() for c in session.diagnosis.fix + session.diagnosis.verify}


def stream_with_llm(session: ChatSession, question: str, llm: LLMClient, settings: Settings | None = None) -> Iterator[str | Answer]:
    """Text pieces as the model writes them (cleaned of control sequences and risky commands), then the checked Answer.

    An empty or failed reply gives the offline answer instead; a cut one keeps its text, with a note.
    """
    fast = bool(settings and settings.fast)
    max_tokens = (settings.max_tokens if settings else None) or (FAST_ANSWER_TOKENS if fast else ANSWER_TOKENS)
    messages = build_chat_messages(session, question, FAST_BUDGET if fast else DEFAULT_BUDGET)
    cleaner = StreamCleaner(_known_commands(session))
    shown: list[str] = []
    notes: list[str] = []
    try:
        for piece in llm.stream(messages, max_tokens=max_tokens):
            text = cleaner.feed(piece)
            if text:
                shown.append(text)
                yield text
    except Cut as exc:
        notes.append(str(exc))
    except LLMError as exc:
        yield from _offline(session, question, f"model unavailable: {exc}", bool(shown))
        return
    rest = cleaner.flush()
    if rest:
        shown.append(rest)
        yield rest
    text = "".join(shown)
    if not text.strip():
        why = "the model only repeated its prompt" if cleaner.echoed else "the model returned an empty answer"
        yield from _offline(session, question, why, False)
        return
    citations, missing = check_citations(text, session)
    if missing:
        notes.append(f"removed citations that do not exist: {', '.join(missing)}")
    if not citations:  # the model may only add: an answer that cites nothing does not replace the grounded one
        yield "\n\n(the model's answer above cites no log line and no encyclopedia section: unverified)\n"
        yield from _offline(session, question, "the model cited nothing", True)
        return
    if cleaner.removed:
        notes.append(f"removed {cleaner.removed} model-suggested command(s) that pipe into a shell or destroy data")
    if notes:
        note = "".join(f"\n\n({n})" for n in notes)
        yield note
        text += note
    yield Answer(answer=text, citations=citations, grounded=bool(citations))


def llm_responder(llm: LLMClient) -> Responder:
    """A chat responder that streams the model's checked answers (the offline answer when the model fails)."""

    found = getattr(llm, "settings", None)
    settings = found if isinstance(found, Settings) else None

    def respond(session: ChatSession, question: str) -> Iterator[str | Answer]:
        return stream_with_llm(session, question, llm, settings)

    return respond
