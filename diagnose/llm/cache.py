"""A response cache for model calls: grounded answers only, keyed on who answered what, expiring.

The key is (model, api base, prompt version, masked messages, request options): another server,
another prompt or another schema never reuses an answer. Only answers that passed grounding are
stored (the caller decides), so a rejected or hostile answer is asked again next time, never
replayed. Entries older than the ``llm_cache_days`` setting are ignored and removed. Masked text only.
"""

from __future__ import annotations

import hashlib
import json
import time
from pathlib import Path
from typing import Any

from diagnose.settings import user_dir

DAY = 86400.0


def cache_dir() -> Path:
    """Where cached answers live."""
    return user_dir() / "llm-cache"


def cache_key(model: str, api_base: str | None, version: str, messages: list[dict[str, str]], options: dict[str, Any] | None = None) -> str:
    """The key of one call."""
    payload = json.dumps(
        {"model": model, "api_base": (api_base or "").rstrip("/"), "version": version, "messages": messages, "options": options or {}},
        sort_keys=True,
    )
    return hashlib.sha256(payload.encode("utf-8")).hexdigest()


def _path(key: str) -> Path:
    return cache_dir() / f"{key}.json"


def load(key: str, max_age_days: float) -> str | None:
    """The cached reply, if any and younger than ``max_age_days`` (an expired one is removed)."""
    if max_age_days <= 0:
        return None
    path = _path(key)
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
        reply, stored = data["reply"], float(data["stored"])
    except (OSError, ValueError, KeyError, TypeError):
        return None
    if time.time() - stored > max_age_days * DAY:
        path.unlink(missing_ok=True)
        return None
    return reply if isinstance(reply, str) else None


def store(key: str, reply: str, max_age_days: float) -> None:
    """Remember a grounded reply (the prompt it answers held masked text only); nothing when caching is off."""
    if max_age_days <= 0:
        return
    path = _path(key)
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_suffix(".tmp")
    tmp.write_text(json.dumps({"reply": reply, "stored": time.time()}), encoding="utf-8")
    tmp.replace(path)


def clear() -> int:
    """Remove every cached answer; how many there were."""
    removed = 0
    for path in cache_dir().glob("*.json"):
        path.unlink(missing_ok=True)
        removed += 1
    for path in cache_dir().glob("*.tmp"):
        path.unlink(missing_ok=True)
    return removed
