"""Plant secrets in a log, drive every endpoint, then grep the server's data dir, temp dir, logs, session store
and every response: none of the planted values may appear anywhere."""

from __future__ import annotations

from pathlib import Path

import httpx
import pytest

from .conftest import running_server
from .samples import SECRETS, planted_log

pytestmark = pytest.mark.server

QUESTIONS = [
    "Show me the lines around line 6",
    "What is on rank 0 lines?",
    "Show me the evidence",
    "Is my token hf_ZpQ7rT2mXw9LkV4nB8cJd3FgHs6YuA1eRt leaked to carol.secret@acme-research.example?",
    "Why rank 5?",
]


def _exercise(http: httpx.Client, log: str) -> list[str]:
    """Every endpoint that sees the log or the session; the text of every response."""
    seen = []
    form = {"file": ("train.log", log.encode(), "text/plain")}
    text = {"content": log.encode(), "headers": {"Content-Type": "text/plain"}}
    for response in (http.post("/api/redactions", files=form), http.post("/api/redactions", **text)):  # type: ignore[arg-type]
        assert response.status_code == 200
        assert response.json()["total"] >= 15
        seen.append(response.text)
    session_ids = []
    for response in (http.post("/api/diagnoses", files=form), http.post("/api/diagnoses", **text)):  # type: ignore[arg-type]
        assert response.status_code == 201, response.text
        assert response.json()["diagnosis"]["root_cause"]["id"] == "cuda-oom"
        session_ids.append(response.json()["session_id"])
        seen.append(response.text)
    for session_id in session_ids:
        for question in QUESTIONS:
            for accept in ("application/json", "text/event-stream"):
                response = http.post(f"/api/sessions/{session_id}/messages", json={"content": question}, headers={"Accept": accept})
                assert response.status_code == 200
                seen.append(response.text)
        session = http.get(f"/api/sessions/{session_id}")
        seen.append(session.text)
        asked = [m["content"] for m in session.json()["history"] if "leaked" in m["content"]]
        assert asked and all("<TOKEN_" in q and "<EMAIL_" in q for q in asked)  # the question itself was masked
    lines_answer = next(s for s in seen if "export HF_TOKEN=<TOKEN_" in s)
    assert "<TOKEN_" in lines_answer  # the planted lines did come back, masked
    return seen


def _files_text(root: Path) -> dict[str, str]:
    return {str(p): p.read_bytes().decode("utf-8", "replace") for p in root.rglob("*") if p.is_file()}


def _redis_text(url: str) -> dict[str, str]:
    """Every key's content as text: strings (zlib-compressed JSON unpacked), lists, hashes and sorted sets."""
    import contextlib
    import zlib

    import redis

    client = redis.Redis.from_url(url)
    found = {}
    for key in client.scan_iter("*"):
        kind = client.type(key).decode()
        if kind == "string":
            raw = client.get(key) or b""
            with contextlib.suppress(zlib.error):
                raw = zlib.decompress(raw)
            parts = [raw]
        elif kind == "list":
            parts = client.lrange(key, 0, -1)
        elif kind == "hash":
            parts = [b"%s=%s" % item for item in client.hgetall(key).items()]
        else:
            parts = client.zrange(key, 0, -1)
        found[f"redis:{key.decode()}"] = b"\n".join(parts).decode("utf-8", "replace")
    return found


@pytest.mark.parametrize("store", ["memory", "redis"])
def test_planted_secrets_appear_nowhere(store: str, tmp_path: Path, request: pytest.FixtureRequest) -> None:
    log = planted_log()
    assert all(secret in log for secret in SECRETS)
    env = {"DIAGNOSE_REDIS_URL": request.getfixturevalue("redis_url")} if store == "redis" else {}
    with running_server(tmp_path / "server", **env) as server, httpx.Client(base_url=server.url, timeout=60) as http:
        responses = _exercise(http, log)
        stored = _redis_text(env["DIAGNOSE_REDIS_URL"]) if env else {}
    assert store != "redis" or any(key.endswith(":history") for key in stored), "the sessions should be in Redis"
    haystacks = {f"response {i}": text for i, text in enumerate(responses)}
    haystacks |= {"server log": server.log_text()} | _files_text(server.home) | _files_text(server.tmp) | stored
    assert "POST /api/diagnoses" in haystacks["server log"]
    leaks = [(secret, where) for where, text in haystacks.items() for secret in SECRETS if secret in text]
    assert leaks == []
