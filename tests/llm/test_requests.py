"""What leaves the process, read from the fake server's recorded requests: a JSON schema whose root cause is an enum of
the candidates and whose cited lines are integers, ``max_tokens`` always, no retry after a read timeout, retries with
backoff on refused connections and 5xx, a fallback to JSON mode where the server has no schema support."""

from __future__ import annotations

import json
import socket
from pathlib import Path

import pytest

from diagnose.errors import LLMUnavailable
from diagnose.llm.client import LiteLLMClient
from diagnose.llm.failures import ContextOverflow
from diagnose.settings import load_settings
from tests.fake_openai import FakeOpenAI, Reply, candidate_ids, quoted_lines, top_candidate_reply
from tests.llm.conftest import OOM, OOM_LINE, answer, cli, run


def test_request_carries_a_schema_of_this_log_s_candidates_integer_citations_and_max_tokens(
    two_causes: tuple[Path, int], fake: FakeOpenAI
) -> None:
    path, line = two_causes
    fake.replies.append(top_candidate_reply)
    d = run(path, fake).diagnosis
    assert len(fake.requests) == 1
    request = fake.requests[0]
    assert isinstance(request["max_tokens"], int) and 0 < request["max_tokens"] <= 1024
    assert request["temperature"] == 0
    schema = request["response_format"]["json_schema"]["schema"]
    assert request["response_format"]["type"] == "json_schema" and request["response_format"]["json_schema"]["strict"]
    assert schema["properties"]["root_cause"]["enum"] == candidate_ids(request) == ["cuda-oom", "nccl-network-failure"]
    assert schema["properties"]["evidence"]["items"]["type"] == "integer"
    quoted = quoted_lines(request)
    citable = {quoted[n] for n in schema["properties"]["evidence"]["items"]["enum"]}
    assert {f"two.log:{OOM_LINE}", f"two.log:{line}"} <= citable < set(quoted.values())  # only lines that show a candidate
    assert schema["properties"]["initiating_rank"]["anyOf"][0]["enum"] == [2, 5]
    assert d.backend == "openai/fake"  # an answer that fits the schema is used


def test_a_read_timeout_is_not_repeated_and_the_rules_answer_stands(fake: FakeOpenAI) -> None:
    fake.default_reply = Reply(hold=True)  # a model still generating: it never answers in time
    d = run(OOM, fake, llm_timeout=1.0).diagnosis
    assert len(fake.requests) == 1
    assert d.backend == "rules" and d.root_cause.id == "cuda-oom"
    assert any("no answer within 1 s" in n and "not repeated" in n for n in d.notes), d.notes


def test_server_errors_are_retried_with_backoff_then_named(fake: FakeOpenAI) -> None:
    fake.replies.extend([503, 429, 500])
    d = run(OOM, fake, llm_retries=2).diagnosis
    assert len(fake.requests) == 3
    assert any("model unavailable" in n and "HTTP 500" in n and "3 attempt(s)" in n for n in d.notes), d.notes


def test_a_dead_server_is_connection_refused_at_its_url() -> None:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]  # nothing listens once the socket closes
    url = f"http://127.0.0.1:{port}/v1"
    settings = load_settings(model="openai/fake", api_base=url, llm_retries=1)
    with pytest.raises(LLMUnavailable, match=f"connection refused at {url}"):
        LiteLLMClient(settings).complete([{"role": "user", "content": "hi"}])


def test_a_context_overflow_says_how_large_the_prompt_was() -> None:
    with FakeOpenAI(context_window=1000) as fake:
        d = run(OOM, fake).diagnosis
        assert len(fake.requests) == 1
    note = next(n for n in d.notes if "too large" in n)
    assert "the prompt was too large:" in note and "tokens for a 1000-token model" in note
    assert "model unavailable" not in note and d.backend == "rules"


def test_the_overflow_error_names_both_sizes() -> None:
    with FakeOpenAI(context_window=100) as fake:
        client = LiteLLMClient(load_settings(model="openai/fake", api_base=fake.api_base))
        with pytest.raises(ContextOverflow) as caught:
            client.complete([{"role": "user", "content": "x" * 2000}], max_tokens=50)
    assert (caught.value.prompt_tokens, caught.value.context) == (500, 100)


@pytest.mark.parametrize("status", [400, 500])
def test_a_server_without_schema_support_gets_json_mode_once(status: int) -> None:
    with FakeOpenAI(json_schema=False) as old:
        old.schema_refusal_status = status  # old llama.cpp servers refuse with a 500: not retried either
        old.replies.extend([answer()])
        d = run(OOM, old).diagnosis
        formats = [r.get("response_format") or {} for r in old.requests]
    assert [f.get("type") for f in formats] == ["json_schema", "json_object"]
    assert formats[1]["schema"]["properties"]["root_cause"]["enum"] == ["cuda-oom"]  # llama-cpp-python's schema key
    assert d.backend == "openai/fake"


def test_an_answer_that_does_not_fit_falls_back_after_one_request(fake: FakeOpenAI) -> None:
    fake.replies.append("Sure! The root cause is probably memory.")
    d = run(OOM, fake).diagnosis
    assert len(fake.requests) == 1
    assert d.backend == "rules" and any("rejected" in n and "no JSON object" in n for n in d.notes)


def test_a_small_context_window_shrinks_the_prompt_and_fast_the_answer(fake: FakeOpenAI, tmp_path: Path) -> None:
    from bench.generate_log import generate

    big = Path(generate(str(tmp_path / "big.log"), size_mb=1, ranks=128)["path"])
    fake.default_reply = top_candidate_reply
    sizes = []
    for settings in ({}, {"context": 1024}, {"fast": True}):
        run(big, fake, **settings)
        sizes.append(len(json.dumps(fake.requests[-1]["messages"])))
    assert sizes[1] < sizes[0] and sizes[2] <= sizes[0]
    assert fake.requests[2]["max_tokens"] < fake.requests[0]["max_tokens"]


@pytest.mark.parametrize(
    ("settings", "windows"),
    [
        ({}, 6000),  # a large model: the configured budget
        ({"context": 8192}, 4124),  # 8k: what is left after the answer, the instructions and the excerpts
        ({"fast": True}, 2000),
        ({"context": 2048}, 200),  # never nothing at all: the floor
    ],
)
def test_budget_follows_the_context_window(settings: dict[str, object], windows: int) -> None:
    from diagnose.llm.budget import plan

    chosen = load_settings(**settings)
    context = chosen.context or 128000
    assert plan(chosen, context, excerpt_chars=4000).window_tokens == windows


def test_log_against_a_slow_server_sends_one_request_and_prints_the_rules_answer(fake: FakeOpenAI, tmp_path: Path) -> None:
    """The acceptance run: the server never answers; only the client's read timeout can end the command."""
    fake.default_reply = Reply(hold=True)
    done = cli(
        "log",
        str(OOM),
        "--json",
        "--no-retrieval",
        "--model",
        "openai/slow",
        "--api-base",
        fake.api_base,
        "--llm-timeout",
        "1",
        home=tmp_path,
    )
    data = json.loads(done.stdout)
    assert done.returncode == 0 and data["backend"] == "rules" and data["root_cause"]["id"] == "cuda-oom"
    assert len(fake.requests) == 1, "a read timeout must never be followed by the same request"
    assert "max_tokens" in fake.requests[0]


def test_max_tokens_flag_is_sent(fake: FakeOpenAI, tmp_path: Path) -> None:
    fake.default_reply = top_candidate_reply
    cli(
        "log",
        str(OOM),
        "--json",
        "--no-retrieval",
        "--model",
        "openai/m",
        "--api-base",
        fake.api_base,
        "--max-tokens",
        "123",
        home=tmp_path,
    )
    assert [r["max_tokens"] for r in fake.requests] == [123]
