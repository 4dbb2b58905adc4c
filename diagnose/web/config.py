"""The web service's own switches, read from the environment inside a function (never at import).

``DIAGNOSE_API_TOKEN``: bearer token every ``/api`` request must carry (required off loopback).
``DIAGNOSE_REDIS_URL``: a Redis server for sessions shared by several workers.
``DIAGNOSE_RETRIEVAL``: ``0`` turns the encyclopedia's vector index off (rules and signatures only).
``DIAGNOSE_SESSION_TTL``: seconds a session lives after its last use (default 3600).
``DIAGNOSE_MAX_SESSIONS``: sessions the in-memory store keeps before dropping the oldest (default 500).
``DIAGNOSE_ALLOWED_MODELS``: comma-separated models a request may name besides the server's own (default
none: a client cannot make the server call, and pay for, a model of its choosing).
"""

from __future__ import annotations

import os
from dataclasses import dataclass

from diagnose.errors import ConfigError

DEFAULT_SESSION_TTL_S = 3600
DEFAULT_MAX_SESSIONS = 500


@dataclass(frozen=True)
class WebConfig:
    """What the web app and ``diagnose serve`` need beyond :class:`diagnose.settings.Settings`."""

    api_token: str | None = None
    redis_url: str | None = None
    retrieval: bool = True
    session_ttl_s: int = DEFAULT_SESSION_TTL_S
    max_sessions: int = DEFAULT_MAX_SESSIONS
    allowed_models: frozenset[str] = frozenset()

    def __repr__(self) -> str:
        """Never show the token or the Redis password."""
        return (f"WebConfig(api_token={'set' if self.api_token else None}, redis={'set' if self.redis_url else None}, "
                f"retrieval={self.retrieval}, session_ttl_s={self.session_ttl_s}, max_sessions={self.max_sessions})")


def _positive_int(var: str, default: int) -> int:
    raw = os.environ.get(var, "").strip()
    if not raw:
        return default
    if not raw.isdigit() or int(raw) < 1:
        raise ConfigError(f"{var} must be a positive whole number, not {raw!r}")
    return int(raw)


def web_config() -> WebConfig:
    """Read the web switches from the environment."""
    retrieval = os.environ.get("DIAGNOSE_RETRIEVAL", "1").strip().lower()
    if retrieval not in {"0", "1", "true", "false", "yes", "no", "on", "off"}:
        raise ConfigError(f"DIAGNOSE_RETRIEVAL must be 0 or 1, not {retrieval!r}")
    return WebConfig(
        api_token=os.environ.get("DIAGNOSE_API_TOKEN") or None,
        redis_url=os.environ.get("DIAGNOSE_REDIS_URL") or None,
        retrieval=retrieval in {"1", "true", "yes", "on"},
        session_ttl_s=_positive_int("DIAGNOSE_SESSION_TTL", DEFAULT_SESSION_TTL_S),
        max_sessions=_positive_int("DIAGNOSE_MAX_SESSIONS", DEFAULT_MAX_SESSIONS),
        allowed_models=frozenset(m.strip() for m in os.environ.get("DIAGNOSE_ALLOWED_MODELS", "").split(",") if m.strip()),
    )
