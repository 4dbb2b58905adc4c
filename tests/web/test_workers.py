"""Issue 16, item 7: ``--workers 4`` on a fresh DIAGNOSE_HOME with the vector index on: one worker builds
the index under a file lock, the others wait and open it; all four start, none crashes and respawns."""

from __future__ import annotations

import time
from pathlib import Path

import httpx
import pytest

from .conftest import EXAMPLE_OOM, diagnose_text, running_server

pytestmark = pytest.mark.server
WORKERS = 4


def test_four_workers_on_a_fresh_home_all_start(redis_url: str, tmp_path: Path) -> None:
    with running_server(tmp_path, "--workers", str(WORKERS), DIAGNOSE_REDIS_URL=redis_url, DIAGNOSE_RETRIEVAL="1") as server:
        deadline = time.monotonic() + 120
        while server.log_text().count("Application startup complete") < WORKERS and time.monotonic() < deadline:
            time.sleep(0.5)
        log = server.log_text()
        assert log.count("Application startup complete") == WORKERS, log[-3000:]
        for problem in ("Traceback", "died", "Error", "Child process"):
            assert problem not in log, log[-3000:]
        assert (server.home / "index" / ".build.lock").exists()
        for _ in range(WORKERS * 2):
            with httpx.Client(base_url=server.url, timeout=60) as http:  # new connections: spread over the workers
                assert http.get("/api/info").json()["retrieval"] is True
                assert diagnose_text(http, EXAMPLE_OOM.read_bytes())["diagnosis"]["root_cause"]["id"] == "cuda-oom"
        assert server.log_text().count("Application startup complete") == WORKERS  # no respawn
