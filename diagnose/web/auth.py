"""Bearer-token check for ``/api``: on when ``DIAGNOSE_API_TOKEN`` is set (always, off loopback)."""

from __future__ import annotations

import secrets

from fastapi import Request
from starlette.exceptions import HTTPException

from diagnose.web.state import app_state


def require_token(request: Request) -> None:
    """Reject a request without ``Authorization: Bearer <token>`` when a token is configured."""
    token = app_state(request).settings.token()
    if token is None:
        return
    scheme, _, given = request.headers.get("authorization", "").partition(" ")
    if scheme.lower() != "bearer" or not secrets.compare_digest(given.strip().encode(), token.encode()):
        raise HTTPException(401, "missing or wrong API token: send Authorization: Bearer <DIAGNOSE_API_TOKEN>",
                            headers={"WWW-Authenticate": "Bearer"})
