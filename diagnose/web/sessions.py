"""Web chat sessions: what one is, and what a store of them promises (``diagnose.web.stores`` opens one).

A session holds masked data only: the diagnosis, the masked log cut to what chat needs
(``diagnose.web.budget``) and the conversation. Stores count the bytes they hold: one session
stays under ``max_session_bytes``, all of them under ``max_memory_mb`` (the least recently used
go first), at most ``max_sessions``, each for ``session_ttl`` seconds after its last use. A turn is
appended, never written back with the whole session.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Protocol

from diagnose.chat.session import ChatSession, Message
from diagnose.errors import ConfigError


class StoreUnavailable(ConfigError):
    """The session store (Redis) cannot be reached or failed."""

    status = 503


class WebSession(ChatSession):
    """A chat session plus the model it was diagnosed with (None: the server's default)."""

    model: str | None = None


@dataclass(frozen=True)
class Limits:
    """What a store may hold: how long, how many, how many bytes each and in all."""

    ttl_s: int
    max_sessions: int
    max_session_bytes: int = 2_000_000
    max_bytes: int = 256 << 20


@dataclass(frozen=True)
class Usage:
    """What a store holds now."""

    sessions: int
    bytes: int


class SessionStore(Protocol):
    """Keeps sessions by id for a while; every read or write restarts the session's time to live."""

    kind: str

    def put(self, session: WebSession) -> None:
        """Save a new session (cut to the byte limit; its history is not kept), evicting others past the limits."""
        ...

    def get(self, session_id: str) -> WebSession | None:
        """The session with its kept history, or None when unknown, evicted or expired."""
        ...

    def append(self, session_id: str, messages: list[Message], redactor_state: dict[str, Any] | None = None) -> bool:
        """Add messages to a session's history (the oldest go past the limit), and replace its masking state
        when given; False when the session is gone."""
        ...

    def delete(self, session_id: str) -> bool:
        """Forget a session; False when there was none."""
        ...

    def ping(self) -> None:
        """Raise StoreUnavailable when the store cannot be used."""
        ...

    def usage(self) -> Usage:
        """How many sessions and bytes the store holds now."""
        ...
