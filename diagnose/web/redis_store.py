"""Sessions in Redis, shared by every worker and server: same limits as in memory, a turn is an append.

Keys: ``diagnose:session:<id>`` holds the compressed session JSON without its history,
``diagnose:session:<id>:history`` the messages as a list (RPUSH + LTRIM per turn, in one script),
both with the TTL; ``diagnose:sessions`` (sorted by last use) and ``diagnose:session-bytes`` (bytes
per session) let any worker apply ``max_sessions`` and ``max_memory_mb``, least recently used first.
"""

from __future__ import annotations

import time
from typing import Any
from urllib.parse import urlsplit

from diagnose.chat.session import Message
from diagnose.errors import ConfigError
from diagnose.web import budget
from diagnose.web.sessions import Limits, StoreUnavailable, Usage, WebSession

PREFIX = "diagnose:session:"
INDEX = "diagnose:sessions"
SIZES = "diagnose:session-bytes"
_APPEND = """
if redis.call('EXISTS', KEYS[1]) == 0 then return -1 end
local added = 0
for i = 5, #ARGV do
  redis.call('RPUSH', KEYS[2], ARGV[i])
  added = added + string.len(ARGV[i])
end
local n = redis.call('LLEN', KEYS[2])
local keep = tonumber(ARGV[2])
local removed = 0
if n > keep then
  for _, old in ipairs(redis.call('LRANGE', KEYS[2], 0, n - keep - 1)) do removed = removed + string.len(old) end
  redis.call('LTRIM', KEYS[2], -keep, -1)
end
redis.call('EXPIRE', KEYS[1], ARGV[1])
redis.call('EXPIRE', KEYS[2], ARGV[1])
redis.call('ZADD', KEYS[3], ARGV[3], ARGV[4])
return redis.call('HINCRBY', KEYS[4], ARGV[4], added - removed)
"""


def safe_url(url: str) -> str:
    """The URL without its password, for messages."""
    parts = urlsplit(url)
    host = parts.hostname or "?"
    return f"{parts.scheme}://{host}{f':{parts.port}' if parts.port else ''}{parts.path}"


class RedisSessionStore:
    """Sessions (masked data only) in Redis, each with a TTL that every use restarts."""

    kind = "redis"
    prefix = PREFIX

    def __init__(self, url: str, limits: Limits) -> None:
        try:
            import redis
        except ImportError as exc:
            raise ConfigError("DIAGNOSE_REDIS_URL is set but the `redis` package is not installed (pip install redis)") from exc
        self.limits = limits
        self.where = safe_url(url)
        self._errors = (redis.RedisError, OSError)
        try:
            self._redis: Any = redis.Redis.from_url(  # redis-py's own types union every reply; Any keeps the calls readable
                url, socket_timeout=5, socket_connect_timeout=5
            )
        except ValueError as exc:
            raise ConfigError(f"DIAGNOSE_REDIS_URL is not a Redis URL ({self.where})") from exc
        self._append = self._redis.register_script(_APPEND)

    def _guard(self, fn: Any, *args: object, **kwargs: object) -> Any:
        try:
            return fn(*args, **kwargs)
        except self._errors as exc:
            raise StoreUnavailable(f"session store {self.where} failed: {type(exc).__name__}") from exc

    def _keys(self, session_id: str) -> tuple[str, str, str]:
        return PREFIX + session_id, f"{PREFIX}{session_id}:history", f"{PREFIX}{session_id}:state"

    def put(self, session: WebSession) -> None:
        """Save a new session (cut to ``max_session_bytes``), then evict past the limits."""
        blob, _ = budget.encode(session, self.limits.max_session_bytes)
        state = budget.encode_state(session.redactor_state)
        key, history, state_key = self._keys(session.id)
        pipe = self._redis.pipeline(transaction=True)
        pipe.set(key, blob, ex=self.limits.ttl_s)
        pipe.set(state_key, state, ex=self.limits.ttl_s)
        pipe.delete(history)
        pipe.zadd(INDEX, {session.id: time.time()})
        pipe.hset(SIZES, session.id, len(blob) + len(state))
        self._guard(pipe.execute)
        self._guard(self._evict)

    def _evict(self) -> None:
        """Forget expired entries of the index, then the least recently used while over a limit (never the last one)."""
        expired = [m.decode() for m in self._redis.zrangebyscore(INDEX, "-inf", time.time() - self.limits.ttl_s)]
        for session_id in expired:
            self._forget(session_id)
        count = int(self._redis.zcard(INDEX))
        total = sum(int(v) for v in self._redis.hvals(SIZES))
        while count > 1 and (count > self.limits.max_sessions or total > self.limits.max_bytes):
            popped = self._redis.zpopmin(INDEX, 1)
            if not popped:
                return
            session_id = popped[0][0].decode()
            total -= int(self._redis.hget(SIZES, session_id) or 0)
            self._forget(session_id)
            count -= 1

    def _forget(self, session_id: str) -> int:
        pipe = self._redis.pipeline(transaction=True)
        pipe.delete(*self._keys(session_id)).zrem(INDEX, session_id).hdel(SIZES, session_id)
        return int(pipe.execute()[0])

    def get(self, session_id: str) -> WebSession | None:
        """The session and its history; a hit restarts both TTLs and marks it recently used."""
        key, history, state_key = self._keys(session_id)
        pipe = self._redis.pipeline(transaction=False)
        pipe.getex(key, ex=self.limits.ttl_s)
        pipe.lrange(history, 0, -1)
        pipe.getex(state_key, ex=self.limits.ttl_s)
        pipe.expire(history, self.limits.ttl_s)
        pipe.zadd(INDEX, {session_id: time.time()}, xx=True)
        blob, messages, state, *_ = self._guard(pipe.execute)
        return budget.decode(blob, messages, state) if blob is not None else None

    def append(self, session_id: str, messages: list[Message], redactor_state: dict[str, Any] | None = None) -> bool:
        """RPUSH the messages and LTRIM to ``MAX_HISTORY`` (one script); False when the session is gone."""
        key, history, state_key = self._keys(session_id)
        args = [self.limits.ttl_s, budget.MAX_HISTORY, time.time(), session_id, *(budget.encode_message(m) for m in messages)]
        result = self._guard(self._append, keys=[key, history, INDEX, SIZES], args=args)
        if result == -1:
            return False
        if redactor_state is not None:
            state = budget.encode_state(redactor_state)
            old = self._guard(self._redis.set, state_key, state, ex=self.limits.ttl_s, get=True)
            self._guard(self._redis.hincrby, SIZES, session_id, len(state) - len(old or b""))
        else:
            self._guard(self._redis.expire, state_key, self.limits.ttl_s)
        self._guard(self._evict)
        return True

    def delete(self, session_id: str) -> bool:
        """Forget a session."""
        return bool(self._guard(self._forget, session_id))

    def ping(self) -> None:
        """Raise StoreUnavailable when Redis cannot be reached."""
        self._guard(self._redis.ping)

    def usage(self) -> Usage:
        """Sessions and bytes the index counts now."""
        count = self._guard(self._redis.zcard, INDEX)
        sizes = self._guard(self._redis.hvals, SIZES)
        return Usage(int(count), sum(int(v) for v in sizes))
