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


def create_app(
    settings: Settings, *, llm: LLMClient | None = None, index: KBIndex | None = None, store: SessionStore | None = None
) -> FastAPI:
    """The app. ``llm=None`` answers from the rules; ``store=None`` picks Redis or memory from the settings.

    ConfigError when the API token is too weak or the session limits cannot hold one session.
    No ``/docs`` or ``/redoc`` (they load from a CDN); ``/openapi.json`` needs the token when one is set.
    """
    from fastapi import FastAPI
    from fastapi.staticfiles import StaticFiles

    from diagnose import __version__
    from diagnose.web import api, pages
    from diagnose.web.auth import check_token
    from diagnose.web.errors import install_error_handling
    from diagnose.web.guard import Guard
    from diagnose.web.logs import install_access_filter
    from diagnose.web.state import AppState
    from diagnose.web.stores import open_store
    from diagnose.web.work import WorkPool

    check_token(settings)
    if store is None:
        store = open_store(settings)
    app = FastAPI(
        title="diagnose",
        summary="Why did the distributed training run die? Upload a log (masked first), get the diagnosis, ask follow-ups.",
        version=__version__,
        docs_url=None,
        redoc_url=None,
    )
    pool = WorkPool(threads=settings.web_threads, queue=settings.web_queue)
    app.state.diagnose = AppState(settings=settings, store=store, llm=llm, index=index, pool=pool)
    install_error_handling(app)
    app.add_middleware(Guard, settings=settings)  # outermost of the app's own: runs before any body is read
    app.include_router(api.router)
    app.include_router(api.health)
    app.include_router(pages.router)
    app.mount("/static", StaticFiles(directory=pages.STATIC), name="static")
    install_access_filter()
    return app


def app_from_env() -> FastAPI:
    """The app as configured by ``config.toml`` and ``DIAGNOSE_*`` (``DIAGNOSE_RETRIEVAL=0``: no vector index).

    The entry point of ``diagnose serve`` and of ``uvicorn --factory diagnose.web:app_from_env``: a
    bad setting ends the process with its one-line message (exit 1), no traceback. Without a token,
    requests arriving on a non-loopback address are refused (``diagnose.web.guard``), whoever started it.
    """
    from diagnose.errors import DiagnoseError
    from diagnose.pipeline import open_backends
    from diagnose.settings import load_settings

    try:
        settings = load_settings()
        from diagnose.web.auth import check_token

        check_token(settings)
        llm, index = open_backends(settings)
        if index is not None:
            index.ensure()  # built (or opened) now, not by the first request; one worker builds, the others wait
        return create_app(settings, llm=llm, index=index)
    except DiagnoseError as exc:
        raise SystemExit(f"diagnose serve: {exc}") from None
