"""Fixtures for the redaction tests: a fresh Redactor, and the shared corpora when present."""

from __future__ import annotations

import json
from collections.abc import Callable

import pytest

from redaction import Redactor
from tests.conftest import shared_dir


@pytest.fixture(scope="session")
def load_corpus() -> Callable[[str], list[dict]]:
    """Return a reader of shared/redaction/<name>.jsonl that skips the test when it is absent."""

    def load(name: str) -> list[dict]:
        root = shared_dir()
        if root is None or not (root / "redaction" / name).is_file():
            pytest.skip(f"shared corpus redaction/{name} not found (set DIAGNOSE_SHARED_DIR to the shared folder)")
        with (root / "redaction" / name).open(encoding="utf-8") as lines:
            return [json.loads(line) for line in lines if line.strip()]

    return load


@pytest.fixture
def redactor() -> Redactor:
    """A fresh Redactor: one session, empty pseudonym mapping."""
    return Redactor()
