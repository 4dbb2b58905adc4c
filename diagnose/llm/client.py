"""The LLM client: a tiny protocol and its litellm implementation. The only ``import litellm``.

litellm is imported only when a model is configured. Before that import its remote
model-cost-map fetch is switched off (``LITELLM_LOCAL_MODEL_COST_MAP``), the one place
this package sets an environment variable, because litellm reads it at import time.

Every request carries ``max_tokens`` and separate connect and read timeouts; neither litellm nor
the OpenAI SDK underneath retries on its own (``num_retries=0``, ``max_retries=0``). This client
retries connection failures, HTTP 429 and 5xx with backoff, and never a read timeout: the server
may still be generating the abandoned answer, and asking again would only queue more work on it.
A server that refuses the JSON schema is asked in JSON mode, then plainly; a chat template with no
system role gets the system text folded into the first user turn.
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable, Iterator
from typing import Any, Protocol

from diagnose.errors import LLMUnavailable, MissingKeyError
from diagnose.llm.failures import BadRequest, Cut, describe_connection, overflow_error
from diagnose.llm.prompting import fold_system
from diagnose.settings import Settings

Message = dict[str, str]
DEFAULT_MAX_TOKENS = 600
DEFAULT_CONTEXT = 8192
_LOCAL_PROVIDERS = ("ollama", "ollama_chat", "hosted_vllm", "llamafile", "lm_studio")
_FORMAT_WORDS = ("response_format", "json_schema", "json_object", "schema", "grammar")


class LLMClient(Protocol):
    """What the engine needs from a model: one completion, or a stream of text pieces."""

    @property
    def model(self) -> str:
        """The litellm model string."""
        ...

    def complete(
        self, messages: list[Message], *, json_mode: bool = False, schema: dict[str, Any] | None = None, max_tokens: int | None = None
    ) -> str:
        """The model's whole answer; constrained to ``schema`` (else JSON mode) where the provider can."""
        ...

    def stream(self, messages: list[Message], *, max_tokens: int | None = None) -> Iterator[str]:
        """The model's answer as it is generated; ``Cut`` after the pieces when it ran too long."""
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


def context_window(model: str, configured: int | None, default: int = DEFAULT_CONTEXT) -> int:
    """The model's context window in tokens: the setting, else litellm's figure for a known model, else ``default``."""
    if configured:
        return configured
    try:
        info = import_litellm().get_model_info(model)
    except Exception:  # an unknown model (a local server's name) is the usual case
        return default
    found = info.get("max_input_tokens") or info.get("max_tokens")
    return int(found) if isinstance(found, int) and found > 0 else default


def _mentions_roles(exc: BadRequest) -> bool:
    text = str(exc).lower()
    return "role" in text or "alternate" in text or "system" in text


def _mentions_format(exc: BadRequest) -> bool:
    text = str(exc).lower()
    return any(word in text for word in _FORMAT_WORDS)


class LiteLLMClient:
    """Any litellm model string: OpenAI, Anthropic, Gemini, Bedrock, Ollama, vLLM, llama.cpp."""

    def __init__(self, settings: Settings) -> None:
        if not settings.model:
            raise MissingKeyError("no model configured")
        self.model = settings.model
        self.api_base = settings.api_base
        self.settings = settings
        self._litellm = import_litellm()
        self._formats_refused: set[str] = set()
        self._fold_system = False
        self._temperature_refused = False

    def _kwargs(self, max_tokens: int | None) -> dict[str, Any]:
        import httpx

        read = self.settings.llm_timeout
        kwargs: dict[str, Any] = {
            "model": self.model,
            "num_retries": 0,
            "max_retries": 0,
            "timeout": httpx.Timeout(read, connect=min(self.settings.llm_connect_timeout, read)),
            "max_tokens": max_tokens or self.settings.max_tokens or DEFAULT_MAX_TOKENS,
        }
        if self.api_base:
            kwargs["api_base"] = self.api_base
            if self.model.startswith("openai/") and not os.environ.get("OPENAI_API_KEY"):
                kwargs["api_key"] = "not-needed"  # local OpenAI-compatible servers ignore it; the client insists
        return kwargs

    def _where(self) -> str:
        return self.api_base or "the provider"

    def _call(self, call: Callable[[], Any], prompt_chars: int) -> Any:
        errors = self._litellm.exceptions
        retried = (
            errors.RateLimitError,
            errors.APIConnectionError,
            errors.ServiceUnavailableError,
            errors.InternalServerError,
            errors.BadGatewayError,
            errors.APIError,
        )
        attempts = self.settings.llm_retries + 1
        for attempt in range(attempts):
            started = time.monotonic()
            try:
                return call()
            except errors.Timeout as exc:
                if time.monotonic() - started < 0.9 * self.settings.llm_timeout:  # a connect timeout: nothing reached the server
                    if attempt + 1 < attempts:
                        time.sleep(min(0.5 * 2**attempt, 8.0))
                        continue
                    why = describe_connection(self.api_base, self.settings.llm_connect_timeout)
                    raise LLMUnavailable(f"{self.model}: {why} ({attempts} attempt(s))") from exc
                raise LLMUnavailable(
                    f"{self.model}: no answer within {self.settings.llm_timeout:g} s from {self._where()} "
                    "(read timeout; not repeated, the server may still be busy with it)"
                ) from exc
            except errors.ContextWindowExceededError as exc:
                raise overflow_error(str(exc), prompt_chars, self.settings.context) from exc
            except errors.AuthenticationError as exc:
                raise LLMUnavailable(f"{self.model}: authentication failed ({type(exc).__name__})") from exc
            except (errors.BadRequestError, errors.UnprocessableEntityError) as exc:
                raise BadRequest(f"{self.model}: the request was refused: {str(exc)[:300]}") from exc
            except retried as exc:
                if "response_format" in str(exc) or "json_schema" in str(exc):  # old llama.cpp servers refuse a format with a 500
                    raise BadRequest(f"{self.model}: the request was refused: {str(exc)[:300]}") from exc
                if attempt + 1 < attempts:
                    time.sleep(min(0.5 * 2**attempt, 8.0))
                    continue
                status = getattr(exc, "status_code", None)
                if isinstance(exc, errors.APIConnectionError) or "connection error" in str(exc).lower():
                    why = describe_connection(self.api_base, self.settings.llm_connect_timeout)
                else:
                    why = f"HTTP {status} from {self._where()}" if status else f"{type(exc).__name__} from {self._where()}"
                raise LLMUnavailable(f"{self.model}: {why} ({attempts} attempt(s))") from exc
            except Exception as exc:  # litellm maps provider errors to many types; none may escape as a traceback
                raise LLMUnavailable(f"{self.model}: {type(exc).__name__}: {str(exc)[:200]}") from exc
        raise LLMUnavailable(self.model)

    def _send(self, messages: list[Message], **kwargs: Any) -> Any:
        """One request; a chat template without a system role gets it folded into the first user turn (remembered)."""
        chars = sum(len(m.get("content", "")) for m in messages)

        def send(shaped: list[Message]) -> Any:
            response = self._call(lambda: self._litellm.completion(messages=shaped, **kwargs), chars)
            if response is None:  # litellm's answer to a streamed conversation whose roles the server keeps refusing
                raise BadRequest(f"{self.model}: the server refused the conversation's roles")
            return response

        try:
            return send(fold_system(messages) if self._fold_system else messages)
        except BadRequest as exc:
            if self._fold_system or not _mentions_roles(exc) or not any(m["role"] == "system" for m in messages):
                raise
            self._fold_system = True
            return send(fold_system(messages))

    def complete(
        self, messages: list[Message], *, json_mode: bool = False, schema: dict[str, Any] | None = None, max_tokens: int | None = None
    ) -> str:
        """One completion: the JSON schema first, then JSON mode, then plain, as far as the provider refuses formats."""
        formats: list[dict[str, Any] | None] = []
        if schema is not None:
            formats.append({"type": "json_schema", "json_schema": {"name": "diagnosis", "schema": schema, "strict": True}})
        if schema is not None or json_mode:
            # llama-cpp-python reads a schema given with JSON mode; other servers ignore the extra key
            formats.append({"type": "json_object", **({"schema": schema} if schema is not None else {})})
        pending = [f for f in formats if f is None or f["type"] not in self._formats_refused] + [None]
        while pending:
            fmt = pending[0]
            kwargs = self._kwargs(max_tokens)
            if fmt is not None:
                kwargs["response_format"] = fmt
            if (schema is not None or json_mode) and not self._temperature_refused:
                kwargs["temperature"] = 0.0  # one best answer: small models wander less
            try:
                response = self._send(messages, **kwargs)
            except BadRequest as exc:
                if "temperature" in kwargs and "temperature" in str(exc).lower():  # reasoning models accept only their default
                    self._temperature_refused = True
                    continue
                if fmt is None or not _mentions_format(exc):
                    raise
                self._formats_refused.add(fmt["type"])
                pending.pop(0)
                continue
            return str(response.choices[0].message.content or "")
        raise LLMUnavailable(self.model)

    def stream(self, messages: list[Message], *, max_tokens: int | None = None) -> Iterator[str]:
        """Text pieces as the model generates them; ``Cut`` when it runs past the timeout or its token allowance."""
        kwargs = self._kwargs(max_tokens)
        response = self._send(messages, stream=True, **kwargs)
        limit_chars = int(kwargs["max_tokens"]) * 8
        deadline: float | None = None
        written = 0
        try:
            for chunk in response:
                piece = chunk.choices[0].delta.content if chunk.choices else None
                if not piece:
                    continue
                deadline = deadline or time.monotonic() + self.settings.llm_timeout
                written += len(piece)
                yield piece
                if written > limit_chars or time.monotonic() > deadline:
                    raise Cut(
                        f"the model's answer was cut after {written} characters "
                        f"({'past its token allowance' if written > limit_chars else 'past the time limit'})"
                    )
        except Cut:
            raise
        except Exception as exc:  # a stream cut mid-way, or a read timeout between pieces
            raise LLMUnavailable(f"{self.model}: stream interrupted ({type(exc).__name__})") from exc
        finally:
            _close(response)


def _close(response: Any) -> None:
    """Hang up a stream that is not read to its end, so the server can stop generating."""
    for target in (response, getattr(response, "completion_stream", None), getattr(response, "response", None)):
        close = getattr(target, "close", None)
        if callable(close):
            try:
                close()
            except Exception:  # best effort: the connection may already be gone
                continue
