"""Open the optional parts the settings ask for: the LLM client and the encyclopedia's vector index."""

from __future__ import annotations

from typing import TYPE_CHECKING

from diagnose.settings import Settings

if TYPE_CHECKING:
    from diagnose.llm import LLMClient

    from diagnose.index import KBIndex


def open_llm(settings: Settings) -> LLMClient | None:
    """The LLM client when a model is configured, else None (rules only)."""
    if not settings.model:
        return None
    from diagnose.llm import LiteLLMClient

    return LiteLLMClient(settings)


def open_backends(settings: Settings, *, retrieval: bool = True) -> tuple[LLMClient | None, KBIndex | None]:
    """(llm, index): each None when not configured or turned off."""
    index = None
    if retrieval:
        from diagnose.index import open_index

        index = open_index(settings)
        index.ensure()
    return open_llm(settings), index
