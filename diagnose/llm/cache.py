"""A response cache for model calls, keyed on (model, prompt version, masked messages); masked text only."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

from diagnose.settings import user_dir


def cache_key(model: str, version: str, messages: list[dict[str, str]]) -> str:
    """The key of one call."""
    payload = json.dumps({"model": model, "version": version, "messages": messages}, sort_keys=True)
    return hashlib.sha256(payload.encode("utf-8")).hexdigest()


def _path(key: str) -> Path:
    return user_dir() / "llm-cache" / f"{key}.json"


def load(key: str) -> str | None:
    """The cached reply, if any."""
    path = _path(key)
    try:
        reply = json.loads(path.read_text(encoding="utf-8"))["reply"]
    except (OSError, ValueError, KeyError, TypeError):
        return None
    return reply if isinstance(reply, str) else None


def store(key: str, reply: str) -> None:
    """Remember a reply (the prompt it answers held masked text only)."""
    path = _path(key)
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_suffix(".tmp")
    tmp.write_text(json.dumps({"reply": reply}), encoding="utf-8")
    tmp.replace(path)
