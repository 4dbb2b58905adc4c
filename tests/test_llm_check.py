"""``diagnose llm check``: what is configured, what is missing, whether the model answers."""

from __future__ import annotations

import json
import os
import subprocess
import sys

from tests.fake_openai import FakeOpenAI, top_candidate_reply


def check(*args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "diagnose", "llm", "check", *args], capture_output=True, text=True, timeout=120, env=env or dict(os.environ)
    )


def test_no_model_means_offline_and_says_how_to_add_one() -> None:
    done = check()
    assert done.returncode == 0
    assert "No model configured" in done.stdout and "DIAGNOSE_MODEL" in done.stdout


def test_missing_provider_key_is_named() -> None:
    env = {k: v for k, v in os.environ.items() if k != "ANTHROPIC_API_KEY"}
    done = check("--model", "anthropic/claude-3-5-haiku-latest", "--no-ping", env=env)
    assert done.returncode == 1
    assert "ANTHROPIC_API_KEY" in done.stdout


def test_a_model_whose_diagnosis_answer_is_used_passes() -> None:
    with FakeOpenAI() as fake:
        fake.default_reply = top_candidate_reply
        done = check("--model", "openai/fake", "--api-base", fake.api_base)
        request = fake.requests[-1]
    assert done.returncode == 0, done.stdout + done.stderr
    assert "diagnosis answer used: root cause cuda-oom" in done.stdout
    assert len(fake.requests) == 1 and request["response_format"]["type"] == "json_schema" and request["max_tokens"]


def test_a_model_that_only_babbles_fails_and_says_why() -> None:
    with FakeOpenAI() as fake:
        fake.default_reply = "ok"
        done = check("--model", "openai/fake", "--api-base", fake.api_base)
    assert done.returncode == 1
    assert "diagnosis answer would not be used" in done.stdout and "no JSON object" in done.stdout


def test_a_model_naming_no_candidate_fails_and_says_why() -> None:
    with FakeOpenAI() as fake:
        fake.default_reply = json.dumps(
            {"root_cause": "unknown", "initiating_rank": None, "evidence": [1], "explanation": "", "fix": [], "verify": []}
        )
        done = check("--model", "openai/fake", "--api-base", fake.api_base)
    assert done.returncode == 1 and "never drop the diagnosis" in done.stdout


def test_unreachable_model_is_one_line_not_a_traceback() -> None:
    with FakeOpenAI() as fake:
        fake.default_reply = 500
        done = check("--model", "openai/fake", "--api-base", fake.api_base)
    assert done.returncode == 1
    assert "would not be used" in done.stdout and "HTTP 500" in done.stdout and "Traceback" not in done.stderr
