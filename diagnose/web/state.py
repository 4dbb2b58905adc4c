"""What every request of one app shares: settings, the model client(s), the index, the session store, the work pool."""

from __future__ import annotations

import threading
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from fastapi import Request

from diagnose.errors import ConfigError
from diagnose.pipeline import open_llm
from diagnose.settings import Settings
from diagnose.web.sessions import SessionStore
from diagnose.web.work import WorkPool

if TYPE_CHECKING:
    from diagnose.encyclopedia.index import KBIndex
    from diagnose.llm.client import LLMClient

MAX_CACHED_MODELS = 8


class ModelNotAllowed(ConfigError):
    """A request named a model the server does not offer."""

    status = 400


@dataclass
class AppState:
    """Shared by all requests of one app (one process)."""

    settings: Settings
    store: SessionStore
    llm: LLMClient | None = None
    index: KBIndex | None = None
    pool: WorkPool = field(default_factory=lambda: WorkPool(threads=2, queue=8))
    _llms: dict[str, LLMClient] = field(default_factory=dict)
    _lock: threading.Lock = field(default_factory=threading.Lock)

    @property
    def max_upload_bytes(self) -> int:
        """The upload size limit in bytes."""
        return self.settings.max_upload_mb << 20

    def llm_for(self, model: str | None) -> LLMClient | None:
        """The client for a model a request named, or the server's default (None: rules only)."""
        if model is None or model == self.settings.model:
            return self.llm
        if model not in self.settings.allowed_models:
            raise ModelNotAllowed(f"model {model!r} is not allowed on this server; set DIAGNOSE_ALLOWED_MODELS to allow it")
        with self._lock:
            client = self._llms.get(model)
            if client is None:
                client = open_llm(self.settings.model_copy(update={"model": model}))
                if client is not None and len(self._llms) < MAX_CACHED_MODELS:
                    self._llms[model] = client
            return client


def app_state(request: Request) -> AppState:
    """The state of the app serving this request."""
    return request.app.state.diagnose  # type: ignore[no-any-return]
