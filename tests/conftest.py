"""Shared fixtures: an isolated DIAGNOSE_HOME, the repo's paths, the shared corpora (skip when absent)."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
EXAMPLES = REPO / "examples"


def shared_dir() -> Path | None:
    """The read-only shared material (../shared from the repo root, or $DIAGNOSE_SHARED_DIR), if present."""
    candidate = Path(os.environ.get("DIAGNOSE_SHARED_DIR", REPO.parent / "shared"))
    return candidate if candidate.is_dir() else None


@pytest.fixture
def shared() -> Path:
    """The shared folder; the test is skipped with a message when it is absent (a user's clone)."""
    found = shared_dir()
    if found is None:
        pytest.skip("../shared is absent (it exists only in the project's CI and dev machines)")
    return found


@pytest.fixture(autouse=True, scope="session")
def isolated_home(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    """The whole run uses its own DIAGNOSE_HOME (one index build) and no model configured."""
    home = tmp_path_factory.mktemp("diagnose-home")
    saved = dict(os.environ)
    os.environ["DIAGNOSE_HOME"] = str(home)
    for var in ("DIAGNOSE_MODEL", "DIAGNOSE_API_BASE", "DIAGNOSE_CHROMA_URL", "DIAGNOSE_EMBEDDING_MODEL"):
        os.environ.pop(var, None)
    yield home
    os.environ.clear()
    os.environ.update(saved)
