"""Where the shipped data lives: the encyclopedia (kb/) and the labeled logs (evals/).

An installed wheel carries them under ``diagnose/_data/``; a source checkout (editable install)
uses the repository's top-level folders. The settings (``kb_dir``, ``evals_dir``: a flag, the
environment or ``config.toml``) can point elsewhere.
"""

from __future__ import annotations

from pathlib import Path

from diagnose.errors import KBError
from diagnose.settings import load_settings

_PACKAGE = Path(__file__).resolve().parent
_REPO = _PACKAGE.parent


def _first_existing(*candidates: Path | None) -> Path | None:
    for path in candidates:
        if path is not None and path.is_dir():
            return path
    return None


def kb_dir(override: Path | None = None) -> Path:
    """The folder holding ``entries/*.md``: the override, the ``kb_dir`` setting, the wheel's copy, the checkout's."""
    found = _first_existing(override, load_settings().kb_dir, _PACKAGE / "_data" / "kb", _REPO / "kb")
    if found is None:
        raise KBError("encyclopedia not found: set DIAGNOSE_KB_DIR to the kb/ folder")
    return found


def evals_dir(override: Path | None = None) -> Path:
    """The folder holding ``cases/<id>/``: the override, the ``evals_dir`` setting, the wheel's copy, the checkout's."""
    found = _first_existing(override, load_settings().evals_dir, _PACKAGE / "_data" / "evals", _REPO / "evals")
    if found is None:
        raise KBError("eval cases not found: set DIAGNOSE_EVALS_DIR to the evals/ folder")
    return found
