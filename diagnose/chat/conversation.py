"""Record a conversation's turns: mask the question, let a responder answer it, keep both in the history."""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import Any

from diagnose.chat.offline import offline_responder
from diagnose.chat.session import Answer, ChatSession, Message, Responder

_ESCAPED = re.compile(r"<_([A-Z][A-Z0-9]*(?:_[A-Z][A-Z0-9]*)*_[0-9]+)>")


def _session_redactor(state: dict[str, Any] | None) -> Any:
    """The session's own redactor (the log's placeholders and learned values), or a fresh one without state."""
    from redaction import Redactor

    from_state = getattr(Redactor, "from_state", None)
    if state is not None and from_state is not None:
        return from_state(state)
    return Redactor()


def mask_question(session: ChatSession, question: str) -> str:
    """Mask a question with the session's redactor state, then keep the updated state in the session.

    A value the log's masking learned (``gpu-node-017``) becomes the log's placeholder, and a new
    value gets a number the log never used. A placeholder the user copied from the report
    (``<HOST_3>``) keeps its meaning: the redactor escapes issued placeholders it meets in input,
    and the question's own literal is put back.
    """
    redactor = _session_redactor(session.redactor_state)
    masked = str(redactor.redact_text(question))
    masked = _ESCAPED.sub(lambda m: f"<{m.group(1)}>" if f"<{m.group(1)}>" in question else m.group(0), masked)
    export = getattr(redactor, "export_state", None)
    if session.redactor_state is not None and export is not None:
        session.redactor_state = export()
    return masked


def ask_stream(session: ChatSession, question: str, *, responder: Responder = offline_responder) -> Iterator[str | Answer]:
    """Answer as a stream: text pieces as they come, then the final Answer; the turn is recorded.

    The question is masked first, like the log and with the log's own redactor state: it may quote
    a host or paste a token, and it is stored in the history and sent to the model.
    """
    question = mask_question(session, question)
    final: Answer | None = None
    for piece in responder(session, question):
        if isinstance(piece, Answer):
            final = piece
        yield piece
    assert final is not None
    session.history.append(Message(role="user", content=question))
    session.history.append(Message(role="assistant", content=final.answer, citations=final.citations))


def ask(session: ChatSession, question: str, *, responder: Responder = offline_responder) -> Answer:
    """Answer a follow-up and record the turn in the session's history."""
    result = None
    for piece in ask_stream(session, question, responder=responder):
        if isinstance(piece, Answer):
            result = piece
    assert result is not None
    return result
