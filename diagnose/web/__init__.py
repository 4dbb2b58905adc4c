"""The web service: a FastAPI app with the JSON API, the page at ``/`` and the encyclopedia at ``/kb``.

``create_app`` takes its parts injected (tests, embedding); ``app_from_env`` builds them from the
settings and the environment, for ``uvicorn --factory`` and ``diagnose serve``. FastAPI is imported
only when an app is built, so ``diagnose --help`` stays fast.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from fastapi import FastAPI

    from diagnose.encyclopedia.index import KBIndex
    from diagnose.llm.client import LLMClient
    from diagnose.settings import Settings
    from diagnose.web.sessions import SessionStore

__all__ = ["app_from_env", "create_app"]


def create_app(settings: Settings, *, llm: LLMClient | None = None, index: KBIndex | None = None,
               store: SessionStore | None = None) -> FastAPI:
    """The app. ``llm=None`` answers from the rules; ``store=None`` picks Redis or memory from the settings."""
    from fastapi import FastAPI
    from fastapi.staticfiles import StaticFiles

    from diagnose import __version__
    from diagnose.web import api, pages
    from diagnose.web.errors import install_error_handling
    from diagnose.web.sessions import open_store
    from diagnose.web.state import AppState

    if store is None:
        store = open_store(settings.redis(), ttl_s=settings.session_ttl, max_sessions=settings.max_sessions)
    app = FastAPI(
        title="diagnose",
        summary="Why did the distributed training run die? Upload a log (masked first), get the diagnosis, ask follow-ups.",
        version=__version__,
    )
    app.state.diagnose = AppState(settings=settings, store=store, llm=llm, index=index)
    install_error_handling(app)
    app.include_router(api.router)
    app.include_router(api.health)
    app.include_router(pages.router)
    app.mount("/static", StaticFiles(directory=pages.STATIC), name="static")
    return app


def app_from_env() -> FastAPI:
    """The app as configured by ``config.toml`` and ``DIAGNOSE_*`` (``DIAGNOSE_RETRIEVAL=0``: no vector index)."""
    from diagnose.pipeline import open_backends
    from diagnose.settings import load_settings
    settings = load_settings()
    llm, index = open_backends(settings)
    return create_app(settings, llm=llm, index=index)
