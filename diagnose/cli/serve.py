"""``diagnose serve``: the web page and the JSON API under uvicorn."""

from __future__ import annotations

from typing import Annotated

import typer

from diagnose.cli.errors import handle_errors
from diagnose.cli.output import err_console
from diagnose.errors import ConfigError
from diagnose.settings import Settings

APP_FACTORY = "diagnose.web:app_from_env"
LIMIT_CONCURRENCY = 2048
"""Connections per worker (open ones count, idle or not); beyond, uvicorn answers 503. Slow clients are dropped
after 10 s (diagnose.web.protocol), so holding this many takes a steady stream of new ones."""
KEEP_ALIVE_S = 5


def is_loopback(host: str) -> bool:
    """True for ``localhost`` and loopback addresses (127.0.0.0/8, ::1)."""
    from diagnose.web.guard import is_loopback as loopback

    return loopback(host)


def check_serve(host: str, workers: int, settings: Settings) -> list[str]:
    """Refuse unsafe or broken setups (ConfigError); return the notes to print at start."""
    from diagnose.web.auth import check_token
    from diagnose.web.stores import limits

    check_token(settings)
    limits(settings)
    if not is_loopback(host) and not settings.api_token:
        raise ConfigError(
            f"binding to {host} exposes the API beyond this machine: set DIAGNOSE_API_TOKEN "
            "(requests then carry 'Authorization: Bearer <token>'), or bind to 127.0.0.1"
        )
    if workers > 1 and not settings.redis_url:
        raise ConfigError(
            f"--workers {workers} needs a shared session store: each worker's in-memory sessions are "
            "its own; set DIAGNOSE_REDIS_URL=redis://host:6379/0, or use one worker"
        )
    store = "redis (shared)" if settings.redis_url else "in memory (this process only)"
    notes = [f"sessions: {store}, expire {settings.session_ttl} s after last use; masked text only"]
    if settings.api_token:
        notes.append("API token required: every /api request must carry 'Authorization: Bearer $DIAGNOSE_API_TOKEN'")
    return notes


def register(app: typer.Typer) -> None:
    """Add the serve command."""

    @app.command("serve")
    @handle_errors
    def serve_command(
        host: Annotated[str, typer.Option("--host", help="Address to bind; anything but loopback needs DIAGNOSE_API_TOKEN.")] = "127.0.0.1",
        port: Annotated[int, typer.Option("--port", "-p", min=1, max=65535, help="Port to listen on.")] = 8000,
        workers: Annotated[int, typer.Option("--workers", "-w", min=1, help="Worker processes; more than 1 needs DIAGNOSE_REDIS_URL.")] = 1,
        new_token: Annotated[bool, typer.Option("--new-token", help="Print a fresh API token (32 random bytes) and exit.")] = False,
    ) -> None:
        """Serve the page (paste a log, see the diagnosis, ask follow-ups) and the API (its OpenAPI schema at /openapi.json).

        Settings come from config.toml and DIAGNOSE_* (DIAGNOSE_MODEL, DIAGNOSE_API_TOKEN,
        DIAGNOSE_REDIS_URL, DIAGNOSE_SESSION_TTL, DIAGNOSE_RETRIEVAL=0 for no vector index).

        \b
        Examples:
          diagnose serve
          diagnose serve --new-token > ~/.diagnose-token
          DIAGNOSE_API_TOKEN=$(cat ~/.diagnose-token) diagnose serve --host 0.0.0.0
          DIAGNOSE_REDIS_URL=redis://127.0.0.1:6379/0 diagnose serve --workers 4
        """
        if new_token:
            from diagnose.web.auth import new_token as make_token

            typer.echo(make_token())
            return
        import uvicorn

        from diagnose.settings import load_settings
        from diagnose.web.protocol import MAX_HEAD_BYTES, http_protocol
        from diagnose.web.stores import open_store

        settings = load_settings()
        notes = check_serve(host, workers, settings)
        if settings.redis_url:
            open_store(settings)
        notes.append(f"model: {settings.model or 'none (rules only; nothing leaves this machine)'}")
        shown = f"[{host}]" if ":" in host else host
        notes.append(f"open http://{shown}:{port}/  (API schema at /openapi.json)")
        console = err_console()
        for note in notes:
            console.print(f"diagnose serve: {note}", highlight=False, markup=False)
        uvicorn.run(
            APP_FACTORY,
            factory=True,
            host=host,
            port=port,
            workers=workers,
            server_header=False,
            http=http_protocol(),
            h11_max_incomplete_event_size=MAX_HEAD_BYTES,
            limit_concurrency=LIMIT_CONCURRENCY,
            timeout_keep_alive=KEEP_ALIVE_S,
        )
