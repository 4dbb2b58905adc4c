"""The evals: the CI gate against the committed baseline, the --json contract, and the LLM path.

The gate runs the rules backend over every labeled case (the full path, masking included) and fails
if top-1 or rank accuracy fall below evals/baseline.json, or if any planted secret leaks.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from diagnose.bundled import evals_dir
from diagnose.evaluation.cases import load_cases
from diagnose.evaluation.run import markdown_report, run_suite
from diagnose.llm.client import LiteLLMClient
from diagnose.pipeline import open_backends
from diagnose.settings import load_settings
from tests.fake_openai import FakeOpenAI, top_candidate_reply

BASELINE = evals_dir() / "baseline.json"
KEYS = {"cases", "top1", "top3", "per_class", "confusion", "rank_accuracy", "evidence_recall", "unknown_precision",
        "unknown_recall", "secrets_leaked", "latency_p50", "latency_p95", "backend"}


@pytest.fixture(scope="module")
def rules_summary() -> dict[str, object]:
    settings = load_settings()
    _, index = open_backends(settings)
    return run_suite(load_cases(evals_dir() / "cases"), settings, index=index)


def test_suite_is_complete(rules_summary: dict[str, object]) -> None:
    assert rules_summary["cases"] >= 90
    per_class = rules_summary["per_class"]
    assert all(row["cases"] >= 3 for row in per_class.values())  # type: ignore[union-attr]
    assert per_class["unknown"]["cases"] >= 5  # type: ignore[index]


def test_gate_no_regression_and_no_leak(rules_summary: dict[str, object]) -> None:
    baseline = json.loads(BASELINE.read_text())
    print("\n" + markdown_report(rules_summary))
    assert rules_summary["secrets_leaked"] == 0, [r for r in rules_summary["results"] if r["leaked"]]  # type: ignore[union-attr]
    assert rules_summary["top1"] >= baseline["top1"]
    assert rules_summary["rank_accuracy"] >= baseline["rank_accuracy"]


def test_eval_json_prints_the_keys_at_top_level(tmp_path: Path) -> None:
    cases = sorted(p for p in (evals_dir() / "cases").iterdir() if p.is_dir())[:3]
    for case in cases:
        shutil.copytree(case, tmp_path / case.name)
    done = subprocess.run([sys.executable, "-m", "diagnose", "eval", "--cases", str(tmp_path), "--json", "--no-retrieval",
                           "--report", str(tmp_path / "report.md")], capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    data = json.loads(done.stdout)
    assert set(data) >= KEYS and data["cases"] == 3
    assert "| top1 |" in (tmp_path / "report.md").read_text()
    baseline = tmp_path / "old.json"
    baseline.write_text(done.stdout)
    again = subprocess.run([sys.executable, "-m", "diagnose", "eval", "--cases", str(tmp_path), "--no-retrieval",
                            "--baseline", str(baseline)], capture_output=True, text=True, timeout=300)
    assert "top1:" in again.stderr


def test_model_agreeing_with_rules_scores_no_worse(rules_summary: dict[str, object]) -> None:
    settings = load_settings()
    _, index = open_backends(settings)
    with FakeOpenAI() as fake:
        fake.default_reply = top_candidate_reply
        client = LiteLLMClient(load_settings(model="openai/fake-echo", api_base=fake.api_base))
        summary = run_suite(load_cases(evals_dir() / "cases"), settings, llm=client, index=index)
    assert summary["backend"] == "openai/fake-echo"
    assert summary["top1"] >= rules_summary["top1"]
    assert summary["secrets_leaked"] == 0
