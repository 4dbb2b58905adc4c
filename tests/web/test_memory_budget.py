"""Issue 16, item 3: sessions are bounded in bytes, not by count: a big log keeps windows, a budget evicts.

A real server with small limits; what its store counts comes from ``/api/info``, its memory from /proc.
"""

from __future__ import annotations

from pathlib import Path

import httpx
import pytest

from .conftest import running_server
from .load import rss_bytes, sized_log

pytestmark = pytest.mark.server
MB = 1 << 20


def _create(http: httpx.Client, log: bytes) -> str:
    response = http.post("/api/diagnoses", content=log, headers={"Content-Type": "text/plain"})
    assert response.status_code == 201, response.text
    return str(response.json()["session_id"])


def test_sessions_of_large_logs_stay_under_the_budget(tmp_path: Path) -> None:
    big = sized_log(10 * MB)
    env = {"DIAGNOSE_MAX_MEMORY_MB": "1", "DIAGNOSE_MAX_SESSION_BYTES": "900000"}
    with (
        running_server(tmp_path, config_toml="max_upload_mb = 16\n", **env) as server,
        httpx.Client(base_url=server.url, timeout=120) as http,
    ):
        first = [_create(http, big) for _ in range(2)]  # warm up: the peak of one diagnosis is in the RSS now
        before = rss_bytes(server.process.pid)
        ids = first + [_create(http, big) for _ in range(12)]
        grown = rss_bytes(server.process.pid) - before
        info = http.get("/api/info").json()
        assert info["session_bytes"] <= 1 * MB
        assert grown < 64 * MB, f"RSS grew {grown / MB:.0f} MB over 12 sessions of 10 MB logs"
        kept = http.get(f"/api/sessions/{ids[-1]}").json()
        assert kept["diagnosis"]["root_cause"]["id"] == "cuda-oom"
        answer = http.post(f"/api/sessions/{ids[-1]}/messages", json={"content": "show me the evidence"}).json()
        assert "CUDA out of memory" in answer["answer"]  # the evidence window is kept

        small = [_create(http, sized_log(600_000, seed=i)) for i in range(80)]  # kept whole: ~20 KB each, compressed
        info = http.get("/api/info").json()
        assert info["session_bytes"] <= 1 * MB and info["sessions"] < 80 + len(ids)
        assert http.get(f"/api/sessions/{ids[0]}").status_code == 404  # least recently used: evicted
        assert http.get(f"/api/sessions/{small[-1]}").status_code == 200


def test_history_is_trimmed_to_what_the_page_and_prompt_use(tmp_path: Path) -> None:
    from diagnose.web.budget import MAX_HISTORY

    with running_server(tmp_path) as server, httpx.Client(base_url=server.url, timeout=60) as http:
        session_id = _create(http, sized_log(20_000))
        for i in range(MAX_HISTORY):
            assert http.post(f"/api/sessions/{session_id}/messages", json={"content": f"why {i}?"}).status_code == 200
        history = http.get(f"/api/sessions/{session_id}").json()["history"]
        assert len(history) == MAX_HISTORY and history[-2]["content"] == f"why {MAX_HISTORY - 1}?"
