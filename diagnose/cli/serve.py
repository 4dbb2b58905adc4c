"""``diagnose serve``: the web page and the JSON API under uvicorn."""

from __future__ import annotations

import ipaddress
from typing import Annotated

import typer

from diagnose.cli.errors import handle_errors
from diagnose.cli.output import err_console
from diagnose.errors import ConfigError
from diagnose.settings import Settings

APP_FACTORY = "diagnose.web:app_from_env"


def is_loopback(host: str) -> bool:
    """True for ``localhost`` and loopback addresses (127.0.0.0/8, ::1)."""
    if host.lower() == "localhost":
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False


def check_serve(host: str, workers: int, settings: Settings) -> list[str]:
    """Refuse unsafe or broken setups (ConfigError); return the notes to print at start."""
    if not is_loopback(host) and not settings.api_token:
        raise ConfigError(f"binding to {host} exposes the API beyond this machine: set DIAGNOSE_API_TOKEN "
                          "(requests then carry 'Authorization: Bearer <token>'), or bind to 127.0.0.1")
    if workers > 1 and not settings.redis_url:
        raise ConfigError(f"--workers {workers} needs a shared session store: each worker's in-memory sessions are "
                          "its own; set DIAGNOSE_REDIS_URL=redis://host:6379/0, or use one worker")
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
        host: Annotated[str, typer.Option("--host", help="Address to bind; anything but loopback needs DIAGNOSE_API_TOKEN.")]
        = "127.0.0.1",
        port: Annotated[int, typer.Option("--port", "-p", min=1, max=65535, help="Port to listen on.")] = 8000,
        workers: Annotated[int, typer.Option("--workers", "-w", min=1, help="Worker processes; more than 1 needs DIAGNOSE_REDIS_URL.")]
        = 1,
    ) -> None:
        """Serve the page (paste a log, see the diagnosis, ask follow-ups) and the API (OpenAPI at /docs).

        Settings come from config.toml and DIAGNOSE_* (DIAGNOSE_MODEL, DIAGNOSE_API_TOKEN,
        DIAGNOSE_REDIS_URL, DIAGNOSE_SESSION_TTL, DIAGNOSE_RETRIEVAL=0 for no vector index).

        \b
        Examples:
          diagnose serve
          DIAGNOSE_API_TOKEN=$(openssl rand -hex 24) diagnose serve --host 0.0.0.0
          DIAGNOSE_REDIS_URL=redis://127.0.0.1:6379/0 diagnose serve --workers 4
        """
        import uvicorn

        from diagnose.settings import load_settings
        from diagnose.web.sessions import open_store

        settings = load_settings()
        notes = check_serve(host, workers, settings)
        if settings.redis_url:
            open_store(settings.redis(), ttl_s=settings.session_ttl, max_sessions=settings.max_sessions)
        notes.append(f"model: {settings.model or 'none (rules only; nothing leaves this machine)'}")
        shown = f"[{host}]" if ":" in host else host
        notes.append(f"open http://{shown}:{port}/  (API docs at /docs)")
        console = err_console()
        for note in notes:
            console.print(f"diagnose serve: {note}", highlight=False, markup=False)
        uvicorn.run(APP_FACTORY, factory=True, host=host, port=port, workers=workers, server_header=False)
