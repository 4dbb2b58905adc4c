"""Sessions in this process's memory, compressed and counted in bytes; the default store (one process only)."""

from __future__ import annotations

import threading
import time
from collections import OrderedDict, deque
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from diagnose.chat.session import Message
from diagnose.web import budget
from diagnose.web.sessions import Limits, Usage, WebSession

ENTRY_OVERHEAD = 1024
"""Bytes counted per session beyond its data (the entry, its id, the containers)."""


@dataclass
class _Entry:
    expires: float
    blob: bytes
    log_bytes: int
    state: bytes = b""
    history: deque[bytes] = field(default_factory=deque)
    history_bytes: int = 0

    @property
    def size(self) -> int:
        return len(self.blob) + len(self.state) + self.history_bytes + ENTRY_OVERHEAD


class MemorySessionStore:
    """Sessions in memory: compressed JSON plus the history's messages, least recently used first out."""

    kind = "memory"

    def __init__(self, limits: Limits, *, clock: Callable[[], float] = time.monotonic) -> None:
        self.limits = limits
        self._clock = clock
        self._items: OrderedDict[str, _Entry] = OrderedDict()
        self._bytes = 0
        self._lock = threading.Lock()

    def _drop(self, session_id: str) -> _Entry | None:
        entry = self._items.pop(session_id, None)
        if entry is not None:
            self._bytes -= entry.size
        return entry

    def _evict(self, now: float) -> None:
        """Expired sessions, then the least recently used while over a limit (never the last one)."""
        limits = self.limits
        while len(self._items) > 1:
            oldest_id, oldest = next(iter(self._items.items()))
            if oldest.expires > now and len(self._items) <= limits.max_sessions and self._bytes <= limits.max_bytes:
                return
            self._drop(oldest_id)
        if self._items and next(iter(self._items.values())).expires <= now:
            self._drop(next(iter(self._items)))

    def put(self, session: WebSession) -> None:
        """Save a new session, cut to ``max_session_bytes``; others are evicted past the limits."""
        blob, log_bytes = budget.encode(session, self.limits.max_session_bytes)
        state = budget.encode_state(session.redactor_state)
        with self._lock:
            now = self._clock()
            self._drop(session.id)
            entry = self._items[session.id] = _Entry(now + self.limits.ttl_s, blob, log_bytes, state)
            self._bytes += entry.size
            self._evict(now)

    def get(self, session_id: str) -> WebSession | None:
        """The session with its history; a hit restarts its time to live and makes it the most recent."""
        with self._lock:
            now = self._clock()
            self._evict(now)
            entry = self._items.get(session_id)
            if entry is None:
                return None
            entry.expires = now + self.limits.ttl_s
            self._items.move_to_end(session_id)
            blob, history, state = entry.blob, list(entry.history), entry.state
        return budget.decode(blob, history, state)

    def append(self, session_id: str, messages: list[Message], redactor_state: dict[str, Any] | None = None) -> bool:
        """Add messages (the oldest go past ``MAX_HISTORY`` messages or the session's byte limit); new masking state if given."""
        encoded = [budget.encode_message(m) for m in messages]
        state = budget.encode_state(redactor_state) if redactor_state is not None else None
        with self._lock:
            entry = self._items.get(session_id)
            if entry is None:
                return False
            before = entry.size
            if state is not None:
                entry.state = state
            room = max(self.limits.max_session_bytes - entry.log_bytes, 0)
            for item in encoded:
                entry.history.append(item)
                entry.history_bytes += len(item)
            while entry.history and (len(entry.history) > budget.MAX_HISTORY or entry.history_bytes > room):
                entry.history_bytes -= len(entry.history.popleft())
            self._bytes += entry.size - before
            now = self._clock()
            entry.expires = now + self.limits.ttl_s
            self._items.move_to_end(session_id)
            self._evict(now)
            return True

    def delete(self, session_id: str) -> bool:
        """Forget a session."""
        with self._lock:
            return self._drop(session_id) is not None

    def ping(self) -> None:
        """Always usable."""

    def usage(self) -> Usage:
        """Sessions and bytes held now (expired ones dropped first)."""
        with self._lock:
            self._evict(self._clock())
            return Usage(len(self._items), self._bytes)

    def __len__(self) -> int:
        return self.usage().sessions
