"""Uvicorn's httptools protocol with limits on the request head: its size, its header count, and its time.

Uvicorn's httptools protocol has none of the three: a 60 MB header is parsed (and concatenated
piece by piece) before the app sees anything, and a client that sends half a request line is held
forever. This subclass answers 431 past ``MAX_HEAD_BYTES`` or ``MAX_HEADERS``, and closes a
connection whose next request head is not complete ``HEAD_TIMEOUT_S`` seconds after the
connection opened or the previous response ended (408 when part of it came). Bodies are bounded
by the front middleware (``diagnose.web.guard``). ``diagnose serve`` passes this class to uvicorn
as ``http=``; without httptools it falls back to h11 with ``h11_max_incomplete_event_size``.
"""

from __future__ import annotations

import asyncio
from typing import Any

from uvicorn.protocols.http.httptools_impl import HttpToolsProtocol

MAX_HEAD_BYTES = 64 * 1024
MAX_HEADERS = 100
HEAD_TIMEOUT_S = 10.0
PROTOCOL = "diagnose.web.protocol:GuardedHttpToolsProtocol"

_REPLIES = {
    431: b"HTTP/1.1 431 Request Header Fields Too Large\r\n",
    408: b"HTTP/1.1 408 Request Timeout\r\n",
}


class _HeadLimit(Exception):
    """Raised inside a parser callback to stop parsing a request head over the limits."""


class GuardedHttpToolsProtocol(HttpToolsProtocol):
    """HttpToolsProtocol plus head size, header count and head time limits."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._head_bytes = 0
        self._header_count = 0
        self._in_head = True
        self._refused = False
        self._head_timer: asyncio.TimerHandle | None = None

    def _arm_head_timer(self) -> None:
        self._cancel_head_timer()
        self._head_timer = self.loop.call_later(HEAD_TIMEOUT_S, self._head_timed_out)

    def _cancel_head_timer(self) -> None:
        if self._head_timer is not None:
            self._head_timer.cancel()
            self._head_timer = None

    def _refuse(self, status: int, message: str) -> None:
        """Answer ``status`` in plain text and close the connection (the request never reaches the app)."""
        if self._refused or self.transport.is_closing():
            return
        self._refused = True
        body = message.encode("ascii")
        self.transport.write(
            _REPLIES[status]
            + b"content-type: text/plain; charset=utf-8\r\ncontent-length: "
            + str(len(body)).encode()
            + b"\r\nconnection: close\r\n\r\n"
            + body
        )
        self.transport.close()

    def _head_timed_out(self) -> None:
        self._head_timer = None
        if self.transport.is_closing():
            return
        if self._in_head and self._head_bytes:
            self.logger.warning("Request head not complete in time: connection closed.")
            self._refuse(408, "the request head did not arrive in time")
        elif self.cycle is None or self.cycle.response_complete:
            self.transport.close()

    def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]
        """Start the clock for the first request head."""
        super().connection_made(transport)
        self._arm_head_timer()

    def connection_lost(self, exc: Exception | None) -> None:
        """Stop the clock."""
        self._cancel_head_timer()
        super().connection_lost(exc)

    def data_received(self, data: bytes) -> None:
        """Feed the parser, then refuse a head that grew past ``MAX_HEAD_BYTES`` without ending."""
        if self._refused:
            return
        if self._in_head:
            self._head_bytes += len(data)
        super().data_received(data)
        if self._in_head and self._head_bytes > MAX_HEAD_BYTES:
            self.logger.warning("Request head over %d bytes: refused.", MAX_HEAD_BYTES)
            self._refuse(431, f"the request head is larger than {MAX_HEAD_BYTES // 1024} KB")

    def send_400_response(self, msg: str) -> None:
        """A parse error caused by a limit becomes 431; any other stays uvicorn's 400."""
        if self._header_count > MAX_HEADERS:
            self._refuse(431, f"more than {MAX_HEADERS} header fields")
        else:
            super().send_400_response(msg)

    def on_message_begin(self) -> None:
        """A new request: its head is counted from here."""
        self._in_head = True
        self._header_count = 0
        super().on_message_begin()

    def on_header(self, name: bytes, value: bytes) -> None:
        """Count header fields; stop parsing past ``MAX_HEADERS``."""
        self._header_count += 1
        if self._header_count > MAX_HEADERS:
            raise _HeadLimit
        super().on_header(name, value)

    def on_headers_complete(self) -> None:
        """The head is in: stop its clock and its byte count."""
        self._in_head = False
        self._head_bytes = 0
        self._cancel_head_timer()
        super().on_headers_complete()

    def on_response_complete(self) -> None:
        """Ready for the next request on this connection: its head gets the same time limit."""
        pipelined = bool(self.pipeline)  # the next head is already in
        super().on_response_complete()
        if not pipelined and not self.transport.is_closing():
            self._in_head = True
            self._head_bytes = 0
            self._arm_head_timer()


def http_protocol() -> str:
    """What ``diagnose serve`` passes to uvicorn as ``http=``: this class, or h11 when httptools is missing."""
    try:
        import httptools  # noqa: F401
    except ImportError:
        return "h11"
    return PROTOCOL
