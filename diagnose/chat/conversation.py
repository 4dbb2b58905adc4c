"""Record a conversation's turns: mask the question, let a responder answer it, keep both in the history."""

from __future__ import annotations

from collections.abc import Iterator

from diagnose.chat.offline import offline_responder
from diagnose.chat.session import Answer, ChatSession, Message, Responder


def ask_stream(session: ChatSession, question: str, *, responder: Responder = offline_responder) -> Iterator[str | Answer]:
    """Answer as a stream: text pieces as they come, then the final Answer; the turn is recorded.

    The question is masked first, like the log: it may quote a host or paste a token, and it is
    stored in the history and sent to the model.
    """
    from redaction import Redactor

    question = Redactor().redact_text(question)
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
