"""A real HTTP server speaking the OpenAI chat-completions API on 127.0.0.1, for litellm to call.

Replies come from a queue (text, or an HTTP status to fail with); every request body is recorded,
so tests can assert on exactly what left the process.
"""

from __future__ import annotations

import json
import re
import threading
from collections import deque
from collections.abc import Callable
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any


class FakeOpenAI:
    """Start with ``with FakeOpenAI() as fake:``; ``fake.api_base`` is the /v1 URL."""

    def __init__(self) -> None:
        self.replies: deque[str | int] = deque()
        self.requests: list[dict[str, Any]] = []
        self.raw_bodies: list[bytes] = []
        self.default_reply: str | int | Callable[[dict[str, Any]], str] = "ok"
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
                reply = fake.replies.popleft() if fake.replies else fake.default_reply
                if callable(reply):
                    reply = reply(request)
                if isinstance(reply, int):
                    self._send(reply, {"error": {"message": "fake failure", "type": "server_error"}})
                elif request.get("stream"):
                    self._stream(reply, request.get("model", "fake"))
                else:
                    self._send(200, {
                        "id": "chatcmpl-fake", "object": "chat.completion", "created": 0,
                        "model": request.get("model", "fake"),
                        "choices": [{"index": 0, "message": {"role": "assistant", "content": reply},
                                     "finish_reason": "stop"}],
                        "usage": {"prompt_tokens": 1, "completion_tokens": 1, "total_tokens": 2},
                    })

            def _send(self, status: int, payload: dict[str, Any]) -> None:
                data = json.dumps(payload).encode()
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def _stream(self, reply: str, model: str) -> None:
                self.send_response(200)
                self.send_header("Content-Type", "text/event-stream")
                self.end_headers()
                words = reply.split(" ")
                for i, word in enumerate(words):
                    piece = word + (" " if i < len(words) - 1 else "")
                    chunk = {"id": "c", "object": "chat.completion.chunk", "created": 0, "model": model,
                             "choices": [{"index": 0, "delta": {"content": piece}, "finish_reason": None}]}
                    self.wfile.write(f"data: {json.dumps(chunk)}\n\n".encode())
                end = {"id": "c", "object": "chat.completion.chunk", "created": 0, "model": model,
                       "choices": [{"index": 0, "delta": {}, "finish_reason": "stop"}]}
                self.wfile.write(f"data: {json.dumps(end)}\n\ndata: [DONE]\n\n".encode())

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.api_base = f"http://127.0.0.1:{self.server.server_address[1]}/v1"
        self._thread = threading.Thread(target=self.server.serve_forever, daemon=True)

    def __enter__(self) -> FakeOpenAI:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.server.shutdown()
        self.server.server_close()

    def sent_text(self) -> str:
        """Everything every request carried, as one string."""
        return b"\n".join(self.raw_bodies).decode("utf-8", errors="replace")


def top_candidate_reply(request: dict[str, Any]) -> str:
    """A model that agrees with the rules: the first candidate, citing the first quoted log line."""
    prompt = request["messages"][-1]["content"]
    candidate = re.search(r"^- ([a-z0-9-]+) \(score", prompt, re.M)
    line = re.search(r"^(\S+:\d+) \| rank", prompt, re.M)
    return json.dumps({
        "root_cause": candidate.group(1) if candidate else "unknown", "initiating_rank": None,
        "evidence": [line.group(1)] if line else [], "explanation": "Agrees with the rules.", "fix": [], "verify": [],
    })
