"""A real HTTP server speaking the OpenAI chat-completions API on 127.0.0.1, for litellm to call.

Replies come from a queue (text, an HTTP status to fail with, or a ``Reply`` that can be slow, hold
the request until the client hangs up, or stream forever); every request body is recorded, so tests
can assert on exactly what left the process. Switches make it behave like the real local servers
that broke the model path: a strict chat template (two messages of one role in a row refused with
HTTP 400 or answered with an empty stream), a small context window (HTTP 400
``context_length_exceeded``), no JSON-schema support (HTTP 400 naming ``response_format``).
"""

from __future__ import annotations

import itertools
import json
import re
import select
import socket
import threading
import time
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, Literal

ESCAPES = "\x1b[2J\x1b[31mRED\x1b[0m \x1b]0;pwned-title\x07 \x1b]8;;http://evil.example/\x1b\\link\x1b]8;;\x1b\\ \x9b31m \x07\x08"
"""Terminal control sequences a hostile model might write: clear screen, colour, window title, hyperlink, C1 CSI, bell."""


@dataclass
class Reply:
    """One scripted reply: text (or an error status), optionally late, held, or endless."""

    text: str = ""
    status: int = 200
    delay: float = 0.0
    """seconds to wait before answering (ended early when the client hangs up)"""
    hold: bool = False
    """never answer: wait until the client hangs up (a model still generating)"""
    forever: bool = False
    """stream pieces of ``text`` until the client hangs up (a model ignoring max_tokens)"""
    error: dict[str, Any] | None = None


Scripted = str | int | Reply | Callable[[dict[str, Any]], "str | int | Reply"]


class FakeOpenAI:
    """Start with ``with FakeOpenAI() as fake:``; ``fake.api_base`` is the /v1 URL."""

    def __init__(
        self,
        *,
        strict_template: Literal["400", "empty"] | None = None,
        context_window: int | None = None,
        json_schema: bool = True,
        system_role: bool = True,
    ) -> None:
        self.replies: deque[Scripted] = deque()
        self.requests: list[dict[str, Any]] = []
        self.raw_bodies: list[bytes] = []
        self.default_reply: Scripted = "ok"
        self.strict_template = strict_template
        self.context_window = context_window
        self.json_schema = json_schema
        self.system_role = system_role
        """False: a strict template with no system role (Mistral v0.1's), which refuses any system message"""
        self.schema_refusal_status = 400
        """how a server without schema support refuses one (old llama.cpp servers answer 500)"""
        self.hung_up = 0
        """requests whose client went away before the answer was complete"""
        self.refused: list[str] = []
        """why requests were refused by the switches above"""
        self._stop = threading.Event()
        fake = self

        class Handler(BaseHTTPRequestHandler):
            disable_nagle_algorithm = True

            def log_message(self, *args: object) -> None:
                return

            def do_POST(self) -> None:
                body = self.rfile.read(int(self.headers.get("Content-Length", "0")))
                fake.raw_bodies.append(body)
                request = json.loads(body or b"{}")
                fake.requests.append(request)
                refusal = fake.refusal(request)
                if refusal is not None:
                    fake.refused.append(refusal[0])
                    if refusal[1] is None:
                        self._stream("", request.get("model", "fake"), forever=False)
                    else:
                        self._send(fake.schema_refusal_status if refusal[0] == "no json_schema" else 400, refusal[1])
                    return
                scripted = fake.replies.popleft() if fake.replies else fake.default_reply
                if callable(scripted):
                    scripted = scripted(request)
                reply = (
                    scripted
                    if isinstance(scripted, Reply)
                    else (Reply(status=scripted) if isinstance(scripted, int) else Reply(text=scripted))
                )
                if (reply.hold or reply.delay) and not self._wait(None if reply.hold else reply.delay):
                    fake.hung_up += 1
                    return
                if reply.status != 200:
                    self._send(reply.status, reply.error or {"error": {"message": "fake failure", "type": "server_error"}})
                elif request.get("stream"):
                    self._stream(reply.text, request.get("model", "fake"), forever=reply.forever)
                else:
                    self._send(
                        200,
                        {
                            "id": "chatcmpl-fake",
                            "object": "chat.completion",
                            "created": 0,
                            "model": request.get("model", "fake"),
                            "choices": [{"index": 0, "message": {"role": "assistant", "content": reply.text}, "finish_reason": "stop"}],
                            "usage": {"prompt_tokens": 1, "completion_tokens": 1, "total_tokens": 2},
                        },
                    )

            def _wait(self, seconds: float | None) -> bool:
                """Wait (True) unless the client hangs up first (False)."""
                deadline = None if seconds is None else time.monotonic() + seconds
                sock: socket.socket = self.connection
                while not fake._stop.is_set():
                    if deadline is not None and time.monotonic() >= deadline:
                        return True
                    readable, _, _ = select.select([sock], [], [], 0.05)
                    if readable:
                        try:
                            if not sock.recv(1, socket.MSG_PEEK):
                                return False
                        except OSError:
                            return False
                return False

            def _send(self, status: int, payload: dict[str, Any]) -> None:
                data = json.dumps(payload).encode()
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def _chunk(self, model: str, delta: dict[str, str], finish: str | None) -> bytes:
                chunk = {
                    "id": "c",
                    "object": "chat.completion.chunk",
                    "created": 0,
                    "model": model,
                    "choices": [{"index": 0, "delta": delta, "finish_reason": finish}],
                }
                return f"data: {json.dumps(chunk)}\n\n".encode()

            def _stream(self, reply: str, model: str, *, forever: bool) -> None:
                self.send_response(200)
                self.send_header("Content-Type", "text/event-stream")
                self.end_headers()
                words = reply.split(" ") if reply else []
                try:
                    while True:
                        for i, word in enumerate(words):
                            piece = word + (" " if i < len(words) - 1 or forever else "")
                            self.wfile.write(self._chunk(model, {"content": piece}, None))
                            if forever:
                                self.wfile.flush()
                                time.sleep(0.01)
                        if not forever or fake._stop.is_set():
                            break
                    self.wfile.write(self._chunk(model, {}, "stop") + b"data: [DONE]\n\n")
                except OSError:
                    fake.hung_up += 1

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        self.api_base = f"http://127.0.0.1:{self.server.server_address[1]}/v1"
        self._thread = threading.Thread(target=self.server.serve_forever, daemon=True)

    def refusal(self, request: dict[str, Any]) -> tuple[str, dict[str, Any] | None] | None:
        """Why a real local server would refuse this request: (reason, error body, or None for an empty stream)."""
        messages = request.get("messages", [])
        roles = [m.get("role") for m in messages if m.get("role") != "system"]
        system = any(m.get("role") == "system" for m in messages)
        if self.strict_template and (
            any(a == b for a, b in itertools.pairwise(roles)) or roles[:1] != ["user"] or (system and not self.system_role)
        ):
            body = {
                "error": {
                    "message": "Conversation roles must alternate user/assistant/user/assistant/...",
                    "type": "invalid_request_error",
                    "code": 400,
                }
            }
            return "roles do not alternate", (body if self.strict_template == "400" else None)
        tokens = sum(len(str(m.get("content", ""))) for m in messages) // 4
        if self.context_window is not None and tokens + int(request.get("max_tokens") or 0) > self.context_window:
            return "context overflow", {
                "error": {
                    "message": f"This model's maximum context length is {self.context_window} tokens. However, your messages "
                    f"resulted in {tokens} tokens. Please reduce the length of the messages.",
                    "type": "invalid_request_error",
                    "param": "messages",
                    "code": "context_length_exceeded",
                }
            }
        kind = (request.get("response_format") or {}).get("type")
        if kind == "json_schema" and not self.json_schema:
            return "no json_schema", {
                "error": {
                    "message": 'response_format type must be one of "text" or "json_object", but got: json_schema',
                    "type": "invalid_request_error",
                    "param": "response_format",
                }
            }
        return None

    def __enter__(self) -> FakeOpenAI:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self.server.shutdown()
        self.server.server_close()

    def sent_text(self) -> str:
        """Everything every request carried, as one string."""
        return b"\n".join(self.raw_bodies).decode("utf-8", errors="replace")


def quoted_lines(request: dict[str, Any]) -> dict[int, str]:
    """The numbered log lines a diagnosis prompt quoted: index -> ``file:line``."""
    prompt = request["messages"][-1]["content"]
    return {int(n): ref for n, ref in re.findall(r"^\[(\d+)\] (\S+:\d+) \| rank", prompt, re.M)}


def error_lines(request: dict[str, Any]) -> list[int]:
    """Numbers of the quoted lines that report an error (what an agreeing model would cite)."""
    prompt = request["messages"][-1]["content"]
    found = re.findall(r"^\[(\d+)\] \S+:\d+ \| rank \S+ \| (.*)$", prompt, re.M)
    return [int(n) for n, text in found if re.search(r"Error|error|FAIL|[Ff]ailed|WARN|Killed|SIG[A-Z]+", text)][:5]


def candidate_ids(request: dict[str, Any]) -> list[str]:
    """The candidate ids a diagnosis prompt offered, best first."""
    return re.findall(r"^- ([a-z0-9-]+) \(score", request["messages"][-1]["content"], re.M)


def top_candidate_reply(request: dict[str, Any]) -> str:
    """A model that agrees with the rules: the first candidate, citing the quoted lines that report errors."""
    candidates = candidate_ids(request)
    return json.dumps(
        {
            "root_cause": candidates[0] if candidates else "unknown",
            "initiating_rank": None,
            "evidence": error_lines(request) or sorted(quoted_lines(request))[:1],
            "explanation": "Agrees with the rules.",
            "fix": [],
            "verify": [],
        }
    )
