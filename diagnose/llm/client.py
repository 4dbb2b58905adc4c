"""The LLM client: a tiny protocol and its litellm implementation. The only ``import litellm``.

litellm is imported only when a model is configured. Before that import its remote
model-cost-map fetch is switched off (``LITELLM_LOCAL_MODEL_COST_MAP``), the one place
this package sets an environment variable, because litellm reads it at import time.
Retries with backoff on timeouts, rate limits and server errors; then ``LLMUnavailable``.
"""

from __future__ import annotations

import os
import time
from collections.abc import Iterator
from typing import Any, Protocol

from diagnose.errors import LLMUnavailable, MissingKeyError
from diagnose.settings import Settings

Message = dict[str, str]
_LOCAL_PROVIDERS = ("ollama", "ollama_chat", "hosted_vllm", "llamafile", "lm_studio")


class LLMClient(Protocol):
    """What the engine needs from a model: one completion, or a stream of text pieces."""

    @property
    def model(self) -> str:
        """The litellm model string."""
        ...

    def complete(self, messages: list[Message], *, json_mode: bool = False) -> str:
        """The model's whole answer."""
        ...

    def stream(self, messages: list[Message]) -> Iterator[str]:
        """The model's answer as it is generated."""
        ...


def import_litellm() -> Any:
    """litellm, with its bundled model cost map and offline mode (unless the user chose otherwise), quiet."""
    os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
    os.environ.setdefault("LITELLM_OFFLINE_MODE", "true")
    import litellm

    litellm.telemetry = False
    litellm.suppress_debug_info = True
    return litellm


def missing_keys(settings: Settings) -> list[str]:
    """Environment variables the configured model needs and that are not set."""
    if not settings.model or settings.api_base or settings.model.split("/", 1)[0] in _LOCAL_PROVIDERS:
        return []
    report = import_litellm().validate_environment(model=settings.model)
    return list(report.get("missing_keys", []))


class LiteLLMClient:
    """Any litellm model string: OpenAI, Anthropic, Gemini, Bedrock, Ollama, vLLM, llama.cpp."""

    def __init__(self, settings: Settings) -> None:
        if not settings.model:
            raise MissingKeyError("no model configured")
        self.model = settings.model
        self.settings = settings
        self._litellm = import_litellm()

    def _kwargs(self) -> dict[str, Any]:
        kwargs: dict[str, Any] = {"model": self.model, "timeout": self.settings.llm_timeout, "num_retries": 0}
        if self.settings.api_base:
            kwargs["api_base"] = self.settings.api_base
            if self.model.startswith("openai/") and not os.environ.get("OPENAI_API_KEY"):
                kwargs["api_key"] = "not-needed"  # local OpenAI-compatible servers ignore it; the client insists
        return kwargs

    def _retrying(self, call: Any) -> Any:
        errors = self._litellm.exceptions
        transient = (errors.Timeout, errors.RateLimitError, errors.APIConnectionError, errors.ServiceUnavailableError,
                     errors.InternalServerError, errors.APIError)
        attempts = self.settings.llm_retries + 1
        for attempt in range(attempts):
            try:
                return call()
            except errors.AuthenticationError as exc:
                raise LLMUnavailable(f"{self.model}: authentication failed ({type(exc).__name__})") from exc
            except transient as exc:
                if attempt + 1 == attempts:
                    raise LLMUnavailable(f"{self.model}: {type(exc).__name__} after {attempts} attempt(s)") from exc
                time.sleep(min(0.5 * 2**attempt, 8.0))
            except Exception as exc:  # litellm maps provider errors to many types; none may escape as a traceback
                raise LLMUnavailable(f"{self.model}: {type(exc).__name__}: {str(exc)[:200]}") from exc
        raise LLMUnavailable(self.model)

    def complete(self, messages: list[Message], *, json_mode: bool = False) -> str:
        """One completion; JSON mode when the provider supports it."""
        kwargs = self._kwargs()
        if json_mode:
            kwargs["response_format"] = {"type": "json_object"}
        response = self._retrying(lambda: self._litellm.completion(messages=messages, **kwargs))
        return response.choices[0].message.content or ""

    def stream(self, messages: list[Message]) -> Iterator[str]:
        """Text pieces as the model generates them."""
        response = self._retrying(lambda: self._litellm.completion(messages=messages, stream=True, **self._kwargs()))
        try:
            for chunk in response:
                piece = chunk.choices[0].delta.content if chunk.choices else None
                if piece:
                    yield piece
        except Exception as exc:  # a stream cut mid-way
            raise LLMUnavailable(f"{self.model}: stream interrupted ({type(exc).__name__})") from exc
