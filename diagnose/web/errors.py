"""One error shape for every failure of the API: ``{"ok": false, "error": "...", "status": N}``.

``install_error_handling`` registers the single handler for DiagnoseError, HTTP errors and
request validation errors, and a last-resort guard that turns any other exception into a 500
without logging its message or traceback (either could quote log text).
"""

from __future__ import annotations

import logging

from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse
from pydantic import BaseModel
from starlette.exceptions import HTTPException
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from diagnose.errors import DiagnoseError
from diagnose.web.logs import scrub_path

log = logging.getLogger("diagnose.web")


class ErrorBody(BaseModel):
    """The body of every error response."""

    ok: bool = False
    error: str
    status: int


def error_body(status: int, message: str) -> dict[str, object]:
    """The error shape as a dict (also used for server-sent ``error`` events)."""
    return ErrorBody(error=message, status=status).model_dump()


def _validation_message(exc: RequestValidationError) -> str:
    parts = []
    for err in exc.errors()[:5]:
        where = ".".join(str(p) for p in err.get("loc", ()) if p != "body") or "request"
        parts.append(f"{where}: {err.get('msg', 'invalid')}")
    return "invalid request: " + "; ".join(parts)


def _status_and_message(exc: Exception) -> tuple[int, str]:
    if isinstance(exc, DiagnoseError):
        return exc.status, str(exc)
    if isinstance(exc, RequestValidationError):
        return 422, _validation_message(exc)
    if isinstance(exc, HTTPException):
        return exc.status_code, str(exc.detail)
    return 500, "internal error"


async def handle_error(request: Request, exc: Exception) -> JSONResponse:
    """The one exception handler: any handled error becomes the error shape with its status."""
    status, message = _status_and_message(exc)
    headers = getattr(exc, "headers", None)  # 401 WWW-Authenticate, 503 Retry-After
    return JSONResponse(error_body(status, message), status_code=status, headers=headers)


class _LastResort:
    """ASGI middleware: an unhandled exception becomes a 500 in the error shape; only its type is logged."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        started = False

        async def tracking_send(message: Message) -> None:
            nonlocal started
            if message["type"] == "http.response.start":
                started = True
            await send(message)

        try:
            await self.app(scope, receive, tracking_send)
        except Exception as exc:
            log.error("unhandled %s in %s %s", type(exc).__name__, scope.get("method"), scrub_path(scope.get("path", "")))
            if not started:
                response = JSONResponse(error_body(500, "internal error"), status_code=500)
                await response(scope, receive, send)


def install_error_handling(app: FastAPI) -> None:
    """Register the one handler for every error type the API raises, and the last-resort guard."""
    for kind in (DiagnoseError, HTTPException, RequestValidationError):
        app.add_exception_handler(kind, handle_error)
    app.add_middleware(_LastResort)
