"""The API token: its strength is checked at start, and every ``/api`` request must carry it when it is set.

The check itself runs in the front middleware (``diagnose.web.guard``), before any body is read;
``require_token`` repeats it as a route dependency so a router used without the guard stays closed.
"""

from __future__ import annotations

import math
import secrets
import string

from fastapi import Request
from starlette.exceptions import HTTPException

from diagnose.errors import ConfigError
from diagnose.settings import Settings
from diagnose.web.state import app_state

MIN_TOKEN_BITS = 256
"""At least 32 random bytes: 64 hex characters, or 43 URL-safe base64 characters (``diagnose serve --new-token``)."""
_MIN_DISTINCT = 12
_ALPHABETS = (
    string.digits,
    string.hexdigits.lower(),
    string.hexdigits.upper(),
    string.ascii_letters + string.digits,
    string.ascii_letters + string.digits + "-_",
    string.ascii_letters + string.digits + "+/=",
)
TOKEN_HINT = "make one with `diagnose serve --new-token` (or `openssl rand -hex 32`)"


def new_token() -> str:
    """A fresh token of 32 random bytes, URL-safe base64 (43 characters)."""
    return secrets.token_urlsafe(32)


def token_bits(token: str) -> float:
    """The most entropy the token can hold: its length times log2 of the smallest usual alphabet it fits in."""
    size = next((len(set(alphabet)) for alphabet in _ALPHABETS if set(token) <= set(alphabet)), 94)
    return len(token) * math.log2(size)


def check_token(settings: Settings) -> None:
    """ConfigError when a configured token is too short, blank or not random-looking (unset is fine)."""
    token = settings.token()
    if token is None:
        return
    if not token.strip() or any(ch.isspace() or not ch.isprintable() for ch in token):
        raise ConfigError(f"DIAGNOSE_API_TOKEN must be one word of printable characters without spaces; {TOKEN_HINT}")
    if token_bits(token) < MIN_TOKEN_BITS or len(set(token)) < _MIN_DISTINCT:
        raise ConfigError(f"DIAGNOSE_API_TOKEN is too weak: use at least 32 random bytes (64 hex or 43 base64 characters); {TOKEN_HINT}")


def token_matches(authorization: str, token: str) -> bool:
    """True when an ``Authorization`` header value is ``Bearer <token>`` (compared in constant time)."""
    scheme, _, given = authorization.partition(" ")
    return scheme.lower() == "bearer" and secrets.compare_digest(given.strip().encode(), token.encode())


def unauthorized() -> HTTPException:
    """The 401 every missing or wrong token gets."""
    return HTTPException(
        401, "missing or wrong API token: send Authorization: Bearer <DIAGNOSE_API_TOKEN>", headers={"WWW-Authenticate": "Bearer"}
    )


def require_token(request: Request) -> None:
    """Reject a request without ``Authorization: Bearer <token>`` when a token is configured."""
    token = app_state(request).settings.token()
    if token is not None and not token_matches(request.headers.get("authorization", ""), token):
        raise unauthorized()
