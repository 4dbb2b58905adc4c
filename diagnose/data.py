"""Where the shipped data lives: the encyclopedia (kb/) and the labeled logs (evals/).

An installed wheel carries them under ``diagnose/_data/``; a source checkout
(editable install) uses the repository's top-level folders. Settings or the
environment (``DIAGNOSE_KB_DIR``, ``DIAGNOSE_EVALS_DIR``) can point elsewhere.
"""

from __future__ import annotations

import os
from pathlib import Path

from diagnose.errors import KBError

_PACKAGE = Path(__file__).resolve().parent
_REPO = _PACKAGE.parent


def _first_existing(*candidates: Path) -> Path | None:
    for path in candidates:
        if path.is_dir():
            return path
    return None


def _env_path(var: str) -> list[Path]:
    value = os.environ.get(var)
    return [Path(value)] if value else []


def kb_dir(override: Path | None = None) -> Path:
    """The folder holding ``entries/*.md``: the override, ``$DIAGNOSE_KB_DIR``, the wheel's copy, the checkout's."""
    found = _first_existing(*([override] if override else []), *_env_path("DIAGNOSE_KB_DIR"),
                            _PACKAGE / "_data" / "kb", _REPO / "kb")
    if found is None:
        raise KBError("encyclopedia not found: set DIAGNOSE_KB_DIR to the kb/ folder")
    return found


def evals_dir(override: Path | None = None) -> Path:
    """The folder holding ``cases/<id>/``: the override, ``$DIAGNOSE_EVALS_DIR``, the wheel's copy, the checkout's."""
    found = _first_existing(*([override] if override else []), *_env_path("DIAGNOSE_EVALS_DIR"),
                            _PACKAGE / "_data" / "evals", _REPO / "evals")
    if found is None:
        raise KBError("eval cases not found: set DIAGNOSE_EVALS_DIR to the evals/ folder")
    return found
