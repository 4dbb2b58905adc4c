"""The web service: a FastAPI app with the JSON API, the page at ``/`` and the encyclopedia at ``/kb``.

``create_app`` takes its parts injected (tests, embedding); ``app_from_env`` builds them from the
settings and the environment, for ``uvicorn --factory`` and ``diagnose serve``. FastAPI is imported
only when an app is built, so ``diagnose --help`` stays fast.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from fastapi import FastAPI

    from diagnose.index import KBIndex
    from diagnose.llm import LLMClient
    from diagnose.settings import Settings
    from diagnose.web.config import WebConfig
    from diagnose.web.sessions import SessionStore

__all__ = ["app_from_env", "create_app"]


def create_app(settings: Settings, *, llm: LLMClient | None = None, index: KBIndex | None = None,
               store: SessionStore | None = None, config: WebConfig | None = None) -> FastAPI:
    """The app. ``llm=None`` answers from the rules; ``store=None`` picks Redis or memory from ``config``."""
    from fastapi import FastAPI
    from fastapi.staticfiles import StaticFiles

    from diagnose.web import api, pages
    from diagnose.web.config import web_config
    from diagnose.web.errors import install_error_handling
    from diagnose.web.sessions import open_store
    from diagnose.web.state import AppState

    config = config or web_config()
    if store is None:
        store = open_store(config.redis_url, ttl_s=config.session_ttl_s, max_sessions=config.max_sessions)
    app = FastAPI(
        title="diagnose",
        summary="Why did the distributed training run die? Upload a log (masked first), get the diagnosis, ask follow-ups.",
        version="0.1.0",
    )
    app.state.diagnose = AppState(settings=settings, config=config, store=store, llm=llm, index=index)
    install_error_handling(app)
    app.include_router(api.router)
    app.include_router(api.health)
    app.include_router(pages.router)
    app.mount("/static", StaticFiles(directory=pages.STATIC), name="static")
    return app


def app_from_env() -> FastAPI:
    """The app as configured by ``config.toml`` and ``DIAGNOSE_*`` (``DIAGNOSE_RETRIEVAL=0``: no vector index)."""
    from diagnose.backends import open_backends
    from diagnose.settings import load_settings
    from diagnose.web.config import web_config

    settings = load_settings()
    config = web_config()
    llm, index = open_backends(settings, retrieval=config.retrieval)
    return create_app(settings, llm=llm, index=index, config=config)
