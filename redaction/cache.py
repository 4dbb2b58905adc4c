"""Where redaction keeps compiled artefacts (never text, never values): the prefilter database.

Read from the environment inside a function, at use: ``<home>/cache``, where ``<home>`` is
``$DIAGNOSE_HOME``, else ``$XDG_CACHE_HOME/diagnose``, else ``~/.cache/diagnose`` (the same
user directory ``diagnose.settings`` resolves; ``redaction`` never imports ``diagnose``).
"""

from __future__ import annotations

import hashlib
import os
import tempfile
import time
from pathlib import Path

_MAGIC = b"diagnose-redaction-cache-1\n"


def cache_dir() -> Path:
    """Return the cache directory (not created here)."""
    home = os.environ.get("DIAGNOSE_HOME")
    if not home:
        xdg = os.environ.get("XDG_CACHE_HOME")
        home = str((Path(xdg) if xdg else Path.home() / ".cache") / "diagnose")
    return Path(home).expanduser() / "cache"


def read_blob(path: Path) -> bytes | None:
    """Return the payload stored at ``path``, or None when absent, unreadable, truncated or corrupt."""
    try:
        raw = path.read_bytes()
    except OSError:
        return None
    head = len(_MAGIC) + 32
    if len(raw) < head or not raw.startswith(_MAGIC):
        return None
    digest, payload = raw[len(_MAGIC) : head], raw[head:]
    return payload if hashlib.sha256(payload).digest() == digest else None


def write_blob(path: Path, payload: bytes) -> bool:
    """Store ``payload`` at ``path`` atomically (with a checksum); False when the directory is not writable."""
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=path.name + ".", suffix=".tmp")
        try:
            with os.fdopen(fd, "wb") as out:
                out.write(_MAGIC + hashlib.sha256(payload).digest() + payload)
            os.replace(tmp, path)
        except BaseException:
            Path(tmp).unlink(missing_ok=True)
            raise
    except OSError:
        return False
    return True


def prune(directory: Path, pattern: str, *, keep: Path, older_than_s: float = 7 * 86400) -> None:
    """Remove files matching ``pattern`` not used for a week (databases of earlier pattern sets), except ``keep``."""
    cutoff = time.time() - older_than_s
    for stale in directory.glob(pattern):
        try:
            if stale != keep and stale.stat().st_atime < cutoff and stale.stat().st_mtime < cutoff:
                stale.unlink()
        except OSError:
            pass
