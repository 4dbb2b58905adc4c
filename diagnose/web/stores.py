"""Open the session store the settings ask for: Redis when ``redis_url`` is set (checked with a ping), else memory."""

from __future__ import annotations

from diagnose.errors import ConfigError
from diagnose.settings import Settings
from diagnose.web.memory_store import MemorySessionStore
from diagnose.web.redis_store import RedisSessionStore
from diagnose.web.sessions import Limits, SessionStore


def limits(settings: Settings) -> Limits:
    """The store limits of these settings; ConfigError when one session could not fit in the memory budget."""
    max_bytes = settings.max_memory_mb << 20
    if settings.max_session_bytes > max_bytes:
        raise ConfigError(
            f"DIAGNOSE_MAX_SESSION_BYTES ({settings.max_session_bytes}) is larger than "
            f"DIAGNOSE_MAX_MEMORY_MB ({settings.max_memory_mb} MB): one session would not fit"
        )
    return Limits(
        ttl_s=settings.session_ttl, max_sessions=settings.max_sessions, max_session_bytes=settings.max_session_bytes, max_bytes=max_bytes
    )


def open_store(settings: Settings) -> SessionStore:
    """Redis when a URL is set (checked with a ping), else memory."""
    url = settings.redis()
    if url:
        store = RedisSessionStore(url, limits(settings))
        store.ping()
        return store
    return MemorySessionStore(limits(settings))
