"""What went wrong talking to a model, said plainly: refused connection, oversized prompt, refused request, cut answer.

These are ``LLMUnavailable`` subclasses, so every caller that falls back on ``LLMError`` keeps working;
the notes a user reads name the cause instead of an exception class.
"""

from __future__ import annotations

import re
import socket
from urllib.parse import urlsplit

from diagnose.errors import LLMUnavailable

CHARS_PER_TOKEN = 4
_OVERFLOW = (
    re.compile(r"maximum context length is (?P<ctx>\d+) tokens.*?(?:resulted in|requested) (?P<n>\d+) tokens", re.S),
    re.compile(r"Requested tokens \((?P<n>\d+)\) exceed context window of (?P<ctx>\d+)"),
    re.compile(r"n_prompt_tokens\W+(?P<n>\d+).*?n_ctx\W+(?P<ctx>\d+)", re.S),
    re.compile(r"(?P<n>\d+) tokens? (?:is|are) (?:more|larger|greater) than .*?(?P<ctx>\d+)", re.S),
)


class BadRequest(LLMUnavailable):
    """The server refused the request itself (HTTP 400): a format it lacks, a template it cannot apply."""


class ContextOverflow(LLMUnavailable):
    """The prompt does not fit the model's context window."""

    def __init__(self, message: str, prompt_tokens: int | None, context: int | None) -> None:
        super().__init__(message)
        self.prompt_tokens = prompt_tokens
        self.context = context


class Cut(LLMUnavailable):
    """A streamed answer was stopped: it ran past its time or token allowance."""


def overflow_error(server_message: str, prompt_chars: int, configured_context: int | None) -> ContextOverflow:
    """'the prompt was too large: N tokens for a K-token model', from the server's words where it gave numbers."""
    tokens: int | None = None
    context: int | None = configured_context
    for pattern in _OVERFLOW:
        match = pattern.search(server_message)
        if match:
            tokens, context = int(match.group("n")), int(match.group("ctx"))
            break
    shown_tokens = f"{tokens}" if tokens else f"about {prompt_chars // CHARS_PER_TOKEN}"
    shown_context = f"a {context}-token model" if context else "the model's context window"
    hint = f"; set --context {context} or use --fast" if context else "; set --context to the model's window or use --fast"
    return ContextOverflow(f"the prompt was too large: {shown_tokens} tokens for {shown_context}{hint}", tokens, context)


def describe_connection(api_base: str | None, connect_timeout: float) -> str:
    """Why a server cannot be reached: refused, silent, or a name that does not resolve (a quick probe of its port)."""
    if not api_base:
        return "could not connect to the provider (connection error)"
    parts = urlsplit(api_base)
    host = parts.hostname or "localhost"
    port = parts.port or (443 if parts.scheme == "https" else 80)
    try:
        with socket.create_connection((host, port), timeout=min(connect_timeout, 5.0)):
            return f"connection error at {api_base} (the server accepts connections but the request failed)"
    except ConnectionRefusedError:
        return f"connection refused at {api_base}"
    except socket.gaierror:
        return f"cannot resolve the host of {api_base}"
    except TimeoutError:
        return f"no connection to {api_base} within {min(connect_timeout, 5.0):g} s"
    except OSError as exc:
        return f"cannot connect to {api_base} ({exc.strerror or type(exc).__name__})"
