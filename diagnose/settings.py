"""Settings: one model for the CLI, the web service and the library.

Precedence: explicit argument (a CLI flag) > environment (``DIAGNOSE_<FIELD>``) > ``config.toml``
in the user directory > default. Settings are read inside functions, never at import time. The
README's configuration table is generated from this model (``settings_table``) and a test keeps
the two equal.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Annotated, Any

from pydantic import Field, SecretStr, ValidationError, field_validator
from pydantic_settings import BaseSettings, NoDecode, PydanticBaseSettingsSource, SettingsConfigDict, TomlConfigSettingsSource

from diagnose.errors import ConfigError

ENV_PREFIX = "DIAGNOSE_"
HOME_VARIABLE = "DIAGNOSE_HOME"


def user_dir() -> Path:
    """The user's data and cache directory: ``$DIAGNOSE_HOME`` or ``~/.cache/diagnose``.

    It holds ``config.toml`` itself, so it is the one switch read from the environment alone.
    """
    home = os.environ.get(HOME_VARIABLE)
    if home:
        return Path(home)
    xdg = os.environ.get("XDG_CACHE_HOME")
    return (Path(xdg) if xdg else Path.home() / ".cache") / "diagnose"


def _flag(name: str) -> dict[str, Any]:
    return {"flag": name}


class Settings(BaseSettings):
    """Everything configurable, validated; unknown keys in ``config.toml`` are an error."""

    model_config = SettingsConfigDict(env_prefix=ENV_PREFIX, extra="forbid", env_ignore_empty=True)

    model: str | None = Field(
        default=None, description="LLM to use (any litellm model string); none = rules only", json_schema_extra=_flag("--model")
    )
    api_base: str | None = Field(
        default=None, description="base URL of an OpenAI-compatible server (llama.cpp, vLLM, Ollama)", json_schema_extra=_flag("--api-base")
    )
    llm_timeout: float = Field(
        default=60.0,
        gt=0,
        description="seconds to wait for the model's answer (a timed-out call is not repeated)",
        json_schema_extra=_flag("--llm-timeout"),
    )
    llm_retries: int = Field(default=2, ge=0, description="retries of a failed model call")
    token_budget: int = Field(default=6000, ge=500, description="tokens of log windows in a diagnosis prompt")
    embedding_model: str | None = Field(default=None, description="litellm embedding model for the index; none = offline hashing")
    chroma_url: str | None = Field(default=None, description="a shared Chroma server; none = embedded index in the user directory")
    retrieval: bool = Field(default=True, description="use the encyclopedia's vector index", json_schema_extra=_flag("--no-retrieval"))
    kb_dir: Path | None = Field(default=None, description="the encyclopedia folder (default: the bundled kb/)")
    evals_dir: Path | None = Field(default=None, description="the eval cases folder (default: the bundled evals/)")
    max_upload_mb: int = Field(default=50, ge=1, description="largest log the web service accepts")
    api_token: SecretStr | None = Field(default=None, description="bearer token every web /api request must carry (required off loopback)")
    redis_url: SecretStr | None = Field(default=None, description="Redis for web sessions shared by several workers")
    session_ttl: int = Field(default=3600, ge=1, description="seconds a web session lives after its last use")
    max_sessions: int = Field(default=500, ge=1, description="web sessions kept before the oldest is dropped")
    allowed_models: Annotated[list[str], NoDecode] = Field(
        default_factory=list, description="models a web request may name besides the server's own (comma-separated)"
    )
    debug: bool = Field(default=False, description="show tracebacks of internal errors")
    max_tokens: int | None = Field(
        default=None,
        ge=16,
        description="most tokens a model may write per answer (default: sized to the answer)",
        json_schema_extra=_flag("--max-tokens"),
    )
    context: int | None = Field(
        default=None,
        ge=512,
        description="the model's context window in tokens (default: litellm's figure, else 8192)",
        json_schema_extra=_flag("--context"),
    )
    fast: bool = Field(
        default=False,
        description="for small local CPU models: 2k tokens of log windows, fewer candidates",
        json_schema_extra=_flag("--fast"),
    )
    llm_connect_timeout: float = Field(default=5.0, gt=0, description="seconds to wait for a connection to the model's server")
    llm_cache_days: float = Field(default=7.0, ge=0, description="days a grounded model answer is reused (0 = no cache)")
    max_session_bytes: int = Field(
        default=2_000_000, ge=10_000, description="bytes of masked log and history one web session keeps (beyond: windows around events)"
    )
    max_memory_mb: int = Field(default=256, ge=1, description="MB all web sessions may hold together; the least recently used go first")
    web_threads: int = Field(default=2, ge=1, description="diagnoses one web server process runs at once")
    web_queue: int = Field(default=8, ge=0, description="diagnoses that may wait for a thread; beyond, 503 with Retry-After")

    @field_validator("allowed_models", mode="before")
    @classmethod
    def _comma_separated(cls, value: object) -> object:
        if isinstance(value, str):
            return [item.strip() for item in value.split(",") if item.strip()]
        return value

    @classmethod
    def settings_customise_sources(
        cls,
        settings_cls: type[BaseSettings],
        init_settings: PydanticBaseSettingsSource,
        env_settings: PydanticBaseSettingsSource,
        dotenv_settings: PydanticBaseSettingsSource,
        file_secret_settings: PydanticBaseSettingsSource,
    ) -> tuple[PydanticBaseSettingsSource, ...]:
        """Flag (init), then environment, then ``config.toml`` in the user directory."""
        return init_settings, env_settings, TomlConfigSettingsSource(settings_cls, toml_file=user_dir() / "config.toml")

    def token(self) -> str | None:
        """The API token's value (None when unset)."""
        return self.api_token.get_secret_value() if self.api_token else None

    def redis(self) -> str | None:
        """The Redis URL's value (None when unset)."""
        return self.redis_url.get_secret_value() if self.redis_url else None


def load_settings(**overrides: object) -> Settings:
    """Settings from flags (``None`` = not given), the environment and ``config.toml``; ConfigError when invalid."""
    given = {key: value for key, value in overrides.items() if value is not None}
    try:
        return Settings(**given)  # type: ignore[arg-type]
    except ValidationError as exc:
        first = exc.errors()[0]
        field = str(first["loc"][0]) if first["loc"] else "settings"
        where = f"{ENV_PREFIX}{field.upper()} / {field}" if field in Settings.model_fields else field
        raise ConfigError(f"invalid setting {where}: {first['msg']}") from exc
    except (OSError, ValueError) as exc:  # an unreadable or malformed config.toml
        raise ConfigError(f"cannot read {user_dir() / 'config.toml'}: {exc}") from exc


def settings_table() -> str:
    """The README's configuration table, generated from the model."""
    rows = ["| setting | flag | environment | `config.toml` key | default |", "|---|---|---|---|---|"]
    for name, field in Settings.model_fields.items():
        extra = field.json_schema_extra if isinstance(field.json_schema_extra, dict) else {}
        flag = f"`{extra['flag']}`" if extra.get("flag") else ""
        default = field.get_default(call_default_factory=True)
        shown = "" if default in (None, []) else f"`{str(default).lower() if isinstance(default, bool) else default}`"
        rows.append(f"| {field.description} | {flag} | `{ENV_PREFIX}{name.upper()}` | `{name}` | {shown} |")
    rows.append(f"| data and cache directory (holds `config.toml`) | | `{HOME_VARIABLE}` | | `~/.cache/diagnose` |")
    return "\n".join(rows)
