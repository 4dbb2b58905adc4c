"""Settings: where things live and which model to use.

Precedence: explicit argument (CLI flag) > environment (``DIAGNOSE_*``) >
``config.toml`` in the user directory > default. Settings are read inside
functions, never at import time.
"""

from __future__ import annotations

import os
import tomllib
from pathlib import Path

from pydantic import BaseModel, ConfigDict, ValidationError

from diagnose.errors import ConfigError

_ENV = {
    "model": "DIAGNOSE_MODEL",
    "api_base": "DIAGNOSE_API_BASE",
    "chroma_url": "DIAGNOSE_CHROMA_URL",
    "kb_dir": "DIAGNOSE_KB_DIR",
    "evals_dir": "DIAGNOSE_EVALS_DIR",
    "embedding_model": "DIAGNOSE_EMBEDDING_MODEL",
}


class Settings(BaseModel):
    """Everything configurable, validated."""

    model_config = ConfigDict(extra="forbid")

    model: str | None = None
    api_base: str | None = None
    chroma_url: str | None = None
    kb_dir: Path | None = None
    evals_dir: Path | None = None
    embedding_model: str | None = None
    llm_timeout: float = 60.0
    llm_retries: int = 2
    token_budget: int = 6000
    max_upload_mb: int = 50


def user_dir() -> Path:
    """The user's data and cache directory: ``$DIAGNOSE_HOME`` or ``~/.cache/diagnose``."""
    home = os.environ.get("DIAGNOSE_HOME")
    if home:
        return Path(home)
    xdg = os.environ.get("XDG_CACHE_HOME")
    return (Path(xdg) if xdg else Path.home() / ".cache") / "diagnose"


def _config_file_values() -> dict[str, object]:
    path = user_dir() / "config.toml"
    if not path.is_file():
        return {}
    try:
        return tomllib.loads(path.read_text(encoding="utf-8"))
    except (OSError, tomllib.TOMLDecodeError) as exc:
        raise ConfigError(f"cannot read {path}: {exc}") from exc


def load_settings(**overrides: object) -> Settings:
    """Build Settings from the config file, the environment and explicit overrides (None = not given)."""
    values: dict[str, object] = dict(_config_file_values())
    for field, var in _ENV.items():
        if os.environ.get(var):
            values[field] = os.environ[var]
    values.update({k: v for k, v in overrides.items() if v is not None})
    try:
        return Settings(**values)
    except ValidationError as exc:
        first = exc.errors()[0]
        where = ".".join(str(p) for p in first["loc"])
        raise ConfigError(f"invalid setting {where}: {first['msg']}") from exc
