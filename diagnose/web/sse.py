"""Server-sent events for a follow-up answer: ``delta`` text pieces, then ``answer`` (or ``error``), then ``done``."""

from __future__ import annotations

import json
import logging
from collections.abc import Callable, Iterator

from diagnose.chat.conversation import ask_stream
from diagnose.chat.session import Answer, Responder
from diagnose.errors import DiagnoseError
from diagnose.web.errors import error_body
from diagnose.web.sessions import WebSession

log = logging.getLogger("diagnose.web")
HEADERS = {"Cache-Control": "no-cache", "X-Accel-Buffering": "no"}


def event(name: str, data: object) -> str:
    """One event; the data is JSON on one line, so newlines in answers survive."""
    return f"event: {name}\ndata: {json.dumps(data, ensure_ascii=False)}\n\n"


def wants_events(accept: str) -> bool:
    """True when the client asked for ``text/event-stream``."""
    return "text/event-stream" in accept.lower()


def answer_events(session: WebSession, question: str, responder: Responder, save: Callable[[WebSession], None]) -> Iterator[str]:
    """Stream the answer to ``question``; the session is saved with the new turn before the ``answer`` event."""
    try:
        final: Answer | None = None
        for piece in ask_stream(session, question, responder=responder):
            if isinstance(piece, Answer):
                final = piece
            else:
                yield event("delta", {"text": piece})
        save(session)  # ask_stream records the turn once it is exhausted
        if final is not None:
            yield event("answer", final.model_dump())
    except DiagnoseError as exc:
        yield event("error", error_body(exc.status, str(exc)))
    except Exception as exc:  # the response has started: report in-band, log the type only
        log.error("unhandled %s while streaming an answer", type(exc).__name__)
        yield event("error", error_body(500, "internal error"))
    yield event("done", {})
