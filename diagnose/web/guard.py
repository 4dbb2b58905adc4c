"""The front door: every request is checked here before the app reads a byte of its body.

In order: without an API token the server must be listening on loopback (this also covers
``uvicorn --factory diagnose.web:app_from_env``), the ``Host`` must name this machine (DNS
rebinding), and a state-changing request must come from the page's own origin (a web page
elsewhere cannot make the user's browser post to it); with a token, ``/api`` and
``/openapi.json`` need it. Then the body: its declared length against the route's cap (413
before reading), and, while the app reads it, the same cap counted and a time limit per piece
and in all (408). Every response gets ``nosniff``, a CSP and no referrer; a response sent before
the body was read closes the connection, so an unread body is never drained.
"""

from __future__ import annotations

import asyncio
import ipaddress
from urllib.parse import urlsplit

from fastapi.responses import JSONResponse
from starlette.exceptions import HTTPException
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from diagnose.settings import Settings
from diagnose.web.auth import token_matches, unauthorized
from diagnose.web.errors import error_body

PROTECTED = ("/api/", "/openapi.json")
UPLOAD_ROUTES = frozenset({"/api/diagnoses", "/api/redactions"})
MESSAGE_BODY_BYTES = 32 * 1024
OTHER_BODY_BYTES = 16 * 1024
FORM_OVERHEAD = 64 * 1024
BODY_IDLE_S = 20.0
BODY_TOTAL_S = 120.0
UNSAFE_METHODS = frozenset({"POST", "PUT", "PATCH", "DELETE"})
CSP = "default-src 'self'; img-src 'self' data:; object-src 'none'; base-uri 'none'; frame-ancestors 'none'; form-action 'self'"
SECURITY_HEADERS = {"Content-Security-Policy": CSP, "X-Content-Type-Options": "nosniff", "Referrer-Policy": "no-referrer"}
_RAW_SECURITY = [(k.lower().encode(), v.encode()) for k, v in SECURITY_HEADERS.items()]


def is_loopback(host: str) -> bool:
    """True for ``localhost`` (and ``*.localhost``) and loopback addresses (127.0.0.0/8, ::1)."""
    host = host.lower().rstrip(".")
    if host == "localhost" or host.endswith(".localhost"):
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False


def upload_too_large(limit: int) -> str:
    """The 413 message of an upload over ``max_upload_mb``."""
    return f"the log is larger than the limit of {limit // (1 << 20)} MB (max_upload_mb)"


def _same_origin(headers: dict[bytes, bytes]) -> bool:
    origin = headers.get(b"origin")
    if origin is not None:
        netloc = urlsplit(origin.decode("latin-1")).netloc.lower()
        return bool(netloc) and netloc == headers.get(b"host", b"").decode("latin-1").lower()
    site = headers.get(b"sec-fetch-site")
    return site is None or site in (b"same-origin", b"none")


class Guard:
    """Pure ASGI middleware: the checks above, then the app with a counted, timed ``receive``."""

    def __init__(self, app: ASGIApp, settings: Settings) -> None:
        self.app = app
        self.token = settings.token()
        self.upload_limit = settings.max_upload_mb << 20

    def _cap(self, method: str, path: str) -> tuple[int, str]:
        if method == "POST" and path in UPLOAD_ROUTES:
            return self.upload_limit + FORM_OVERHEAD, upload_too_large(self.upload_limit)
        if method == "POST" and path.startswith("/api/sessions/") and path.endswith("/messages"):
            return MESSAGE_BODY_BYTES, f"the question's body is larger than {MESSAGE_BODY_BYTES // 1024} KB"
        return OTHER_BODY_BYTES, f"the request body is larger than {OTHER_BODY_BYTES // 1024} KB"

    def _refusal(self, scope: Scope, headers: dict[bytes, bytes]) -> HTTPException | None:
        """The error to answer without calling the app, or None when the request may go on."""
        path: str = scope.get("path", "")
        if self.token is None:
            server = scope.get("server")
            if server and server[1] is not None and not is_loopback(str(server[0])):
                return HTTPException(
                    403, "this server listens beyond loopback without DIAGNOSE_API_TOKEN: set a token, or bind to 127.0.0.1"
                )
            host = urlsplit("//" + headers.get(b"host", b"").decode("latin-1")).hostname
            if host is not None and not is_loopback(host):
                return HTTPException(
                    403, "without DIAGNOSE_API_TOKEN this server answers only requests for localhost or 127.0.0.1 (Host header)"
                )
            if scope.get("method") in UNSAFE_METHODS and not _same_origin(headers):
                return HTTPException(403, "cross-origin request refused: post from the page this server serves")
        elif path.startswith(PROTECTED) and not token_matches(headers.get(b"authorization", b"").decode("latin-1"), self.token):
            return unauthorized()
        return None

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        """Check, then run the app with the guarded ``receive`` and ``send``."""
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        headers = dict(reversed(scope["headers"]))  # the first of repeated headers wins
        cap, too_large = self._cap(scope["method"], scope["path"])
        declared = headers.get(b"content-length", b"")
        expects_body = (declared.isdigit() and int(declared) > 0) or b"chunked" in headers.get(b"transfer-encoding", b"").lower()
        body = _BodyGuard(receive, cap, too_large, expects_body)
        guarded_send = _secure(send, body)
        refusal = self._refusal(scope, headers)
        if refusal is None and declared.isdigit() and int(declared) > cap:
            refusal = HTTPException(413, too_large)
        if refusal is not None:
            response = JSONResponse(
                error_body(refusal.status_code, str(refusal.detail)), status_code=refusal.status_code, headers=refusal.headers
            )
            await response(scope, receive, guarded_send)
            return
        await self.app(scope, body.receive, guarded_send)


class _BodyGuard:
    """``receive`` with the route's byte cap and time limits while the body comes in."""

    def __init__(self, receive: Receive, cap: int, too_large: str, expects_body: bool) -> None:
        self._receive = receive
        self.cap = cap
        self.too_large = too_large
        self.done = not expects_body
        self.received = 0
        self._deadline: float | None = None

    async def receive(self) -> Message:
        """The next message; 413 past the cap, 408 when a piece is late or the whole body is."""
        if self.done:
            return await self._receive()
        loop = asyncio.get_running_loop()
        if self._deadline is None:
            self._deadline = loop.time() + BODY_TOTAL_S
        wait = min(BODY_IDLE_S, self._deadline - loop.time())
        try:
            message = await asyncio.wait_for(self._receive(), max(wait, 0.001))
        except TimeoutError:
            raise HTTPException(408, "the request body came too slowly") from None
        if message["type"] == "http.request":
            self.received += len(message.get("body", b""))
            if self.received > self.cap:
                raise HTTPException(413, self.too_large)
            self.done = not message.get("more_body", False)
        else:
            self.done = True
        return message


def _secure(send: Send, body: _BodyGuard) -> Send:
    async def secured(message: Message) -> None:
        if message["type"] == "http.response.start":
            headers = list(message.get("headers", []))
            present = {name.lower() for name, _ in headers}
            headers += [(name, value) for name, value in _RAW_SECURITY if name not in present]
            if not body.done:  # answered before the body was read: do not drain it, close
                headers.append((b"connection", b"close"))
            message = {**message, "headers": headers}
        await send(message)

    return secured
