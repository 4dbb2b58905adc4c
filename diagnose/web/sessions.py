"""Where chat sessions live between requests: in this process's memory (default) or in Redis (shared).

A session holds masked data only: the diagnosis, the masked ParsedLog and the conversation.
The in-memory store belongs to one process: with ``--workers N > 1`` each worker would see
only its own sessions, so several workers need the Redis store.
"""

from __future__ import annotations

import threading
import time
from collections import OrderedDict
from collections.abc import Callable
from typing import Protocol
from urllib.parse import urlsplit

from diagnose.chat.session import ChatSession
from diagnose.errors import ConfigError


class StoreUnavailable(ConfigError):
    """The session store (Redis) cannot be reached or failed."""

    status = 503


class WebSession(ChatSession):
    """A chat session plus the model it was diagnosed with (None: the server's default)."""

    model: str | None = None


class SessionStore(Protocol):
    """Keeps sessions by id for a while; every read or write restarts the session's time to live."""

    kind: str

    def get(self, session_id: str) -> WebSession | None:
        """The session, or None when unknown or expired."""
        ...

    def put(self, session: WebSession) -> None:
        """Save (or replace) a session."""
        ...

    def delete(self, session_id: str) -> bool:
        """Forget a session; False when there was none."""
        ...

    def ping(self) -> None:
        """Raise StoreUnavailable when the store cannot be used."""
        ...


class MemorySessionStore:
    """Sessions in this process's memory, each for ``ttl_s`` seconds after last use, at most ``max_sessions``."""

    kind = "memory"

    def __init__(self, *, ttl_s: float, max_sessions: int, clock: Callable[[], float] = time.monotonic) -> None:
        self.ttl_s = ttl_s
        self.max_sessions = max_sessions
        self._clock = clock
        self._items: OrderedDict[str, tuple[float, WebSession]] = OrderedDict()
        self._lock = threading.Lock()

    def _expire(self, now: float) -> None:
        while self._items:
            oldest_id, (expires, _) = next(iter(self._items.items()))
            if expires > now and len(self._items) <= self.max_sessions:
                return
            del self._items[oldest_id]

    def get(self, session_id: str) -> WebSession | None:
        """The session, or None when unknown or expired; a hit restarts its time to live."""
        with self._lock:
            now = self._clock()
            self._expire(now)
            item = self._items.pop(session_id, None)
            if item is None:
                return None
            self._items[session_id] = (now + self.ttl_s, item[1])
            return item[1]

    def put(self, session: WebSession) -> None:
        """Save a session, dropping the least recently used ones beyond ``max_sessions``."""
        with self._lock:
            now = self._clock()
            self._items.pop(session.id, None)
            self._items[session.id] = (now + self.ttl_s, session)
            self._expire(now)

    def delete(self, session_id: str) -> bool:
        """Forget a session."""
        with self._lock:
            return self._items.pop(session_id, None) is not None

    def ping(self) -> None:
        """Always usable."""

    def __len__(self) -> int:
        with self._lock:
            self._expire(self._clock())
            return len(self._items)


def _safe_url(url: str) -> str:
    """The URL without its password, for messages."""
    parts = urlsplit(url)
    host = parts.hostname or "?"
    return f"{parts.scheme}://{host}{f':{parts.port}' if parts.port else ''}{parts.path}"


class RedisSessionStore:
    """Sessions as JSON (masked data only) in Redis under ``diagnose:session:<id>``, each with a TTL."""

    kind = "redis"
    prefix = "diagnose:session:"

    def __init__(self, url: str, *, ttl_s: int) -> None:
        try:
            import redis
        except ImportError as exc:
            raise ConfigError("DIAGNOSE_REDIS_URL is set but the `redis` package is not installed (pip install redis)") from exc
        self.ttl_s = ttl_s
        self.where = _safe_url(url)
        self._errors = (redis.RedisError, OSError)
        try:
            self._redis = redis.Redis.from_url(url, socket_timeout=5, socket_connect_timeout=5)
        except ValueError as exc:
            raise ConfigError(f"DIAGNOSE_REDIS_URL is not a Redis URL ({self.where})") from exc

    def _call(self, method: str, *args: object, **kwargs: object) -> object:
        try:
            return getattr(self._redis, method)(*args, **kwargs)
        except self._errors as exc:
            raise StoreUnavailable(f"session store {self.where} failed: {type(exc).__name__}") from exc

    def get(self, session_id: str) -> WebSession | None:
        """The session, or None; a hit restarts its TTL (GETEX)."""
        raw = self._call("getex", self.prefix + session_id, ex=self.ttl_s)
        return WebSession.model_validate_json(raw) if raw is not None else None  # type: ignore[arg-type]

    def put(self, session: WebSession) -> None:
        """Save the session's JSON with the TTL."""
        self._call("set", self.prefix + session.id, session.model_dump_json(), ex=self.ttl_s)

    def delete(self, session_id: str) -> bool:
        """Forget a session."""
        return bool(self._call("delete", self.prefix + session_id))

    def ping(self) -> None:
        """Raise StoreUnavailable when Redis cannot be reached."""
        self._call("ping")


def open_store(redis_url: str | None, *, ttl_s: int, max_sessions: int) -> SessionStore:
    """Redis when a URL is given (checked with a ping), else memory."""
    if redis_url:
        store = RedisSessionStore(redis_url, ttl_s=ttl_s)
        store.ping()
        return store
    return MemorySessionStore(ttl_s=ttl_s, max_sessions=max_sessions)
