"""The JSON API under ``/api`` (its OpenAPI schema at ``/openapi.json``) and ``/healthz``."""

from __future__ import annotations

from typing import Annotated, Any

from fastapi import APIRouter, Depends, Query, Request, Response
from fastapi.responses import StreamingResponse
from pydantic import BaseModel, Field
from starlette.exceptions import HTTPException

from diagnose.chat.conversation import ask
from diagnose.chat.session import Answer, Message
from diagnose.encyclopedia.entries import get_entry, load_entries
from diagnose.pipeline import chat_responder, diagnose
from diagnose.render.timeline_events import timeline_svg
from diagnose.schema import Diagnosis, Redactions
from diagnose.web import sse
from diagnose.web.auth import require_token
from diagnose.web.errors import ErrorBody
from diagnose.web.masking import count_masks
from diagnose.web.sessions import WebSession
from diagnose.web.state import AppState, app_state
from diagnose.web.upload import read_upload

router = APIRouter(prefix="/api", dependencies=[Depends(require_token)])
health = APIRouter()
State = Annotated[AppState, Depends(app_state)]
_MAX_ID = 100


def _errors(*codes: int) -> dict[int | str, dict[str, Any]]:
    return {code: {"model": ErrorBody} for code in codes}


LOG_BODY: dict[str, Any] = {
    "requestBody": {
        "required": True,
        "content": {
            "text/plain": {"schema": {"type": "string"}},
            "multipart/form-data": {
                "schema": {
                    "type": "object",
                    "required": ["file"],
                    "properties": {
                        "file": {
                            "type": "array",
                            "items": {"type": "string", "format": "binary"},
                            "description": "the log; repeat the field for per-rank files",
                        },
                        "model": {"type": "string", "description": "litellm model string (default: the server's)"},
                    },
                }
            },
        },
    }
}


class DiagnosisCreated(BaseModel):
    """A new session and its diagnosis."""

    session_id: str
    diagnosis: Diagnosis
    timeline_svg: str | None = Field(
        default=None,
        description="the failure timeline as an SVG document (made by diagnose, every text escaped, no script); "
        "null when at most one rank is involved",
    )


class SessionView(BaseModel):
    """A session as the API shows it: the diagnosis and the conversation (never the log)."""

    session_id: str
    diagnosis: Diagnosis
    history: list[Message]
    model: str | None = None


class Question(BaseModel):
    """A follow-up question."""

    content: str = Field(min_length=1, max_length=4000, description="the question, in plain words")


class Info(BaseModel):
    """What this server does with an upload, and what its sessions hold now."""

    model: str | None = Field(description="the default model, or null for rules only")
    retrieval: bool
    store: str
    max_upload_mb: int
    session_ttl_s: int
    max_session_bytes: int
    max_memory_mb: int
    sessions: int = Field(description="sessions kept now")
    session_bytes: int = Field(description="bytes they hold (compressed), counted against max_memory_mb")


class EntrySummary(BaseModel):
    """One encyclopedia entry in the list."""

    id: str
    title: str
    kind: str
    tags: list[str]
    summary: str


def _session(state: AppState, session_id: str) -> WebSession:
    found = state.store.get(session_id) if len(session_id) <= _MAX_ID else None
    if found is None:
        raise HTTPException(404, "no such session (unknown, deleted or expired)")
    return found


@router.get("/info", response_model=Info)
def info(state: State) -> Info:
    """The default model, the session store, the limits and what the store holds."""
    settings, usage = state.settings, state.store.usage()
    return Info(
        model=settings.model,
        retrieval=state.index is not None,
        store=state.store.kind,
        max_upload_mb=settings.max_upload_mb,
        session_ttl_s=settings.session_ttl,
        max_session_bytes=settings.max_session_bytes,
        max_memory_mb=settings.max_memory_mb,
        sessions=usage.sessions,
        session_bytes=usage.bytes,
    )


@router.post("/redactions", response_model=Redactions, openapi_extra=LOG_BODY, responses=_errors(400, 413, 415, 503))
async def redactions(request: Request, state: State) -> Redactions:
    """What would be masked in this log, by type: counts only. Nothing is stored and no model is called."""
    ticket = state.pool.admit()
    try:
        upload = await read_upload(request, state.max_upload_bytes)
        return await ticket.run(lambda: count_masks(upload.sources))
    finally:
        ticket.release()


@router.post("/diagnoses", response_model=DiagnosisCreated, status_code=201, openapi_extra=LOG_BODY, responses=_errors(400, 413, 415, 503))
async def create_diagnosis(
    request: Request,
    response: Response,
    state: State,
    model: Annotated[str | None, Query(description="litellm model string (default: the server's)")] = None,
) -> DiagnosisCreated:
    """Diagnose a log (masked first) and open a chat session about it; 503 with Retry-After when the server is full."""
    ticket = state.pool.admit()
    try:
        upload = await read_upload(request, state.max_upload_bytes, model)

        def work() -> tuple[WebSession, str | None]:
            result = diagnose(upload.sources, settings=state.settings, llm=state.llm_for(upload.model), index=state.index)
            upload.sources.clear()  # the raw text goes as soon as it is read
            session = WebSession(
                diagnosis=result.diagnosis,
                log=result.log,
                model=upload.model,
                redactor_state=result.redactor_state,
                flight_recorder=result.flight_recorder,
            )
            verdict = result.flight_recorder.verdict if result.flight_recorder else None
            timeline = timeline_svg(result.diagnosis, result.log, verdict)  # before the store cuts the log to its budget
            state.store.put(session)
            return session, timeline

        session, timeline = await ticket.run(work)
    finally:
        ticket.release()
    response.headers["Location"] = f"/api/sessions/{session.id}"
    return DiagnosisCreated(session_id=session.id, diagnosis=session.diagnosis, timeline_svg=timeline)


@router.get("/sessions/{session_id}", response_model=SessionView, responses=_errors(404))
def get_session(session_id: str, state: State) -> SessionView:
    """The diagnosis and the conversation so far."""
    session = _session(state, session_id)
    return SessionView(session_id=session.id, diagnosis=session.diagnosis, history=session.history, model=session.model)


@router.delete("/sessions/{session_id}", status_code=204, responses=_errors(404))
def delete_session(session_id: str, state: State) -> Response:
    """Forget a session now (it also expires on its own)."""
    if len(session_id) > _MAX_ID or not state.store.delete(session_id):
        raise HTTPException(404, "no such session (unknown, deleted or expired)")
    return Response(status_code=204)


@router.post(
    "/sessions/{session_id}/messages",
    response_model=Answer,
    responses={**_errors(404, 422), 200: {"content": {"text/event-stream": {}}}},
)
def post_message(session_id: str, question: Question, request: Request, state: State) -> Any:
    """Ask a follow-up. With ``Accept: text/event-stream`` the answer streams as server-sent events."""
    session = _session(state, session_id)
    responder = chat_responder(state.llm_for(session.model))
    masking_before = session.redactor_state

    def record(asked: WebSession) -> None:
        """Append the turn (and the masking state if the question taught it something); the session is not rewritten."""
        changed = asked.redactor_state if asked.redactor_state != masking_before else None
        state.store.append(asked.id, asked.history[-2:], changed)

    # ask() masks the question first (with the session's masking state), before anything keeps or sends it
    if sse.wants_events(request.headers.get("accept", "")):
        return StreamingResponse(
            sse.answer_events(session, question.content, responder, record), media_type="text/event-stream", headers=sse.HEADERS
        )
    answer = ask(session, question.content, responder=responder)
    record(session)
    return answer


@router.get("/kb", response_model=list[EntrySummary])
def list_kb(state: State) -> list[EntrySummary]:
    """Every encyclopedia entry: id, title, kind, tags, summary."""
    return [EntrySummary(id=e.id, title=e.title, kind=e.kind, tags=e.tags, summary=e.summary) for e in load_entries(state.settings.kb_dir)]


@router.get("/kb/{entry_id}", responses=_errors(404))
def get_kb(entry_id: str, state: State) -> dict[str, object]:
    """One entry: every field, with its sections as Markdown and fix/verify as lists."""
    return get_entry(entry_id, state.settings.kb_dir).public_fields()


@health.get("/healthz")
def healthz(state: State) -> dict[str, object]:
    """Liveness: the app answers and its session store works."""
    state.store.ping()
    return {"ok": True, "store": state.store.kind}
