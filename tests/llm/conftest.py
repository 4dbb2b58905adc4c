"""Shared pieces of the model-path tests: a log with two candidates on two hosts, and a runner of the real pipeline."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from diagnose.encyclopedia.entries import get_entry
from diagnose.llm.client import LiteLLMClient
from diagnose.parse.ingest import resolve_sources
from diagnose.pipeline import Result, diagnose
from diagnose.settings import load_settings
from tests.conftest import EXAMPLES
from tests.fake_openai import FakeOpenAI

OOM = EXAMPLES / "multi-rank-oom.log"
OOM_LINE = 203
"""rank 5's ``torch.OutOfMemoryError`` line: the rules' root cause (cuda-oom, rank 5, host <HOST_2>)"""
WATCHDOG_LINE = 207
"""a rank-2 watchdog timeout: a consequence, it shows no OOM"""


@pytest.fixture
def two_causes(tmp_path: Path) -> tuple[Path, int]:
    """multi-rank-oom.log plus, at its end, an NCCL network failure printed by rank 2 (host <HOST_1>): (path, its line)."""
    entry = get_entry("nccl-network-failure")
    example = next(x for s in entry.signatures if s.role == "initiating" for x in s.examples)
    text = OOM.read_text(encoding="utf-8")
    path = tmp_path / "two.log"
    path.write_text(text + f"[rank2]: {example}\n", encoding="utf-8")
    return path, len(text.splitlines()) + 1


@pytest.fixture
def fake() -> Iterator[FakeOpenAI]:
    with FakeOpenAI() as server:
        yield server


def run(path: Path, fake: FakeOpenAI, model: str = "openai/fake", **settings: Any) -> Result:
    """The real pipeline, in process, with a litellm client talking HTTP to the fake server (no cache reuse across tests)."""
    settings.setdefault("llm_cache_days", 0)
    chosen = load_settings(model=model, api_base=fake.api_base, retrieval=False, **settings)
    return diagnose(resolve_sources([str(path)]), settings=chosen, llm=LiteLLMClient(chosen))


def cli(*args: str, home: Path, timeout: float = 300) -> subprocess.CompletedProcess[str]:
    """``python -m diagnose ...`` in a subprocess with its own DIAGNOSE_HOME."""
    env = {**os.environ, "DIAGNOSE_HOME": str(home)}
    done = subprocess.run([sys.executable, "-m", "diagnose", *args], capture_output=True, text=True, timeout=timeout, env=env)
    assert "Traceback" not in done.stderr, done.stderr
    return done


def cli_input(*args: str, stdin: str, home: Path, timeout: float = 300) -> subprocess.CompletedProcess[str]:
    """``python -m diagnose ...`` reading ``stdin`` (a scripted chat), without a controlling terminal."""
    env = {**os.environ, "DIAGNOSE_HOME": str(home)}
    done = subprocess.run(
        [sys.executable, "-m", "diagnose", *args],
        input=stdin,
        capture_output=True,
        text=True,
        timeout=timeout,
        env=env,
        start_new_session=True,
    )
    assert "Traceback" not in done.stderr, done.stderr
    return done


def answer(root: str = "cuda-oom", rank: int | None = 5, evidence: list[Any] | None = None, **extra: Any) -> str:
    """A diagnosis reply in the schema's shape."""
    return json.dumps(
        {
            "root_cause": root,
            "initiating_rank": rank,
            "evidence": evidence if evidence is not None else [f"{OOM.name}:{OOM_LINE}"],
            "explanation": extra.pop("explanation", "Rank 5 ran out of memory first."),
            "fix": extra.pop("fix", []),
            "verify": extra.pop("verify", []),
            **extra,
        }
    )
