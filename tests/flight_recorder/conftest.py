"""Fixtures of the Flight Recorder tests: one Redactor per test, the synthetic cases and their generator."""

from __future__ import annotations

import importlib.util
from pathlib import Path
from types import ModuleType

import pytest

from redaction import Redactor

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "flight_recorder"


@pytest.fixture
def redactor() -> Redactor:
    """A fresh masking session (placeholders numbered from 1)."""
    return Redactor()


@pytest.fixture(scope="session")
def generator() -> ModuleType:
    """tests/fixtures/flight_recorder/generate.py, loaded as a module."""
    spec = importlib.util.spec_from_file_location("fr_generate", FIXTURES / "generate.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.fixture
def fr_shared(shared: Path) -> Path:
    """The real dumps of the shared folder (skipped when absent)."""
    folder = shared / "flight-recorder"
    if not folder.is_dir():
        pytest.skip("shared/flight-recorder is absent")
    return folder
