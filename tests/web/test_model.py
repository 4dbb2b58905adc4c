"""With a model: a real local OpenAI-compatible server (tests.fake_openai) behind litellm.

The upload names the model (``model`` form field or query); the diagnosis and the streamed follow-up come
from it, grounded; and every byte the model received is masked.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from tests.fake_openai import FakeOpenAI

from .conftest import Server, read_events, running_server
from .samples import CHAT_REPLY, SECRETS, fake_model, planted_log

pytestmark = pytest.mark.server


@pytest.fixture
def fake() -> Iterator[FakeOpenAI]:
    with FakeOpenAI() as server:
        server.default_reply = fake_model
        yield server


@pytest.fixture
def model_server(fake: FakeOpenAI, tmp_path: Path) -> Iterator[Server]:
    """A server with no default model that allows the fake ones, talking to the fake through DIAGNOSE_API_BASE."""
    with running_server(tmp_path, DIAGNOSE_API_BASE=fake.api_base, DIAGNOSE_ALLOWED_MODELS="openai/fake-web,openai/fake-down") as server:
        yield server


def test_upload_names_the_model_and_chat_streams_from_it(model_server: Server, fake: FakeOpenAI) -> None:
    log = planted_log()
    with httpx.Client(base_url=model_server.url, timeout=120) as http:
        assert http.get("/api/info").json()["model"] is None
        created = http.post(
            "/api/diagnoses", params={"model": "openai/fake-web"}, content=log.encode(), headers={"Content-Type": "text/plain"}
        )
        assert created.status_code == 201, created.text
        diagnosis = created.json()["diagnosis"]
        assert diagnosis["backend"] == "openai/fake-web"
        assert diagnosis["root_cause"]["id"] == "cuda-oom" and diagnosis["initiating_rank"] == 5
        session_id = created.json()["session_id"]
        assert http.get(f"/api/sessions/{session_id}").json()["model"] == "openai/fake-web"

        streamed = http.post(
            f"/api/sessions/{session_id}/messages", json={"content": "Why rank 5?"}, headers={"Accept": "text/event-stream"}
        )
        events = read_events(streamed)
        deltas = [data["text"] for name, data in events if name == "delta"]  # type: ignore[index]
        assert len(deltas) > 5 and "".join(deltas) == CHAT_REPLY
        final = next(data for name, data in events if name == "answer")
        cited = {(c["kind"], c["line"], c["entry_id"]) for c in final["citations"]}  # type: ignore[index]
        assert ("log", 211, None) in cited and ("kb", None, "cuda-oom") in cited
    assert len(fake.requests) == 2
    assert all(request["model"] == "fake-web" for request in fake.requests)
    sent = fake.sent_text()
    assert "<TOKEN_" in sent
    stored = "\n".join(p.read_text(errors="replace") for p in model_server.home.rglob("*") if p.is_file())
    for where in (sent, stored, model_server.log_text()):
        assert [secret for secret in SECRETS if secret in where] == []


def test_form_field_model_and_an_unreachable_model(model_server: Server, fake: FakeOpenAI) -> None:
    fake.default_reply = 503
    with httpx.Client(base_url=model_server.url, timeout=120) as http:
        created = http.post(
            "/api/diagnoses", files={"file": ("train.log", planted_log().encode(), "text/plain")}, data={"model": "openai/fake-down"}
        )
        assert created.status_code == 201, created.text
        diagnosis = created.json()["diagnosis"]
        assert diagnosis["backend"] == "rules"
        assert any("model unavailable" in note for note in diagnosis["notes"])
        assert diagnosis["root_cause"]["id"] == "cuda-oom"
    assert fake.requests and all(request["model"] == "fake-down" for request in fake.requests)


def test_a_model_the_server_does_not_allow_is_refused(model_server: Server, fake: FakeOpenAI) -> None:
    calls = len(fake.requests)
    with httpx.Client(base_url=model_server.url, timeout=60) as http:
        response = http.post(
            "/api/diagnoses", params={"model": "openai/gpt-4o"}, content=planted_log().encode(), headers={"Content-Type": "text/plain"}
        )
    assert response.status_code == 400
    assert response.json() == {"ok": False, "error": response.json()["error"], "status": 400}
    assert "not allowed" in response.json()["error"]
    assert len(fake.requests) == calls
