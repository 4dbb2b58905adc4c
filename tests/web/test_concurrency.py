"""Issue 16, items 2 and 4: uploads at once never fail with a 500; a form of many tiny files is refused early."""

from __future__ import annotations

from collections.abc import Iterator

import httpx
import pytest

from diagnose.web.upload import MAX_FILES

from .conftest import Server, running_server
from .load import concurrently, sized_log, upload

pytestmark = pytest.mark.server
LOG_1MB = sized_log(1 << 20)


@pytest.fixture(scope="module")
def busy_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    """A server with the default pool: 2 threads, 8 waiting."""
    with running_server(tmp_path_factory.mktemp("busy"), config_toml="max_upload_mb = 4\n") as server:
        yield server


@pytest.mark.parametrize("at_once", [2, 8, 16])
def test_concurrent_uploads_get_201_or_503_with_retry_after(busy_server: Server, at_once: int) -> None:
    outcomes = concurrently(at_once, upload(busy_server.url, LOG_1MB))
    statuses = sorted(o.status for o in outcomes)
    assert set(statuses) <= {201, 503}, statuses
    assert all(o.retry_after and int(o.retry_after) > 0 for o in outcomes if o.status == 503)
    assert statuses.count(201) >= min(at_once, 10)  # 2 threads + 8 waiting are admitted
    assert "Traceback" not in busy_server.log_text() and "ScratchInUse" not in busy_server.log_text()


def test_the_diagnoses_of_concurrent_uploads_are_right(busy_server: Server) -> None:
    def call(i: int) -> httpx.Response:
        with httpx.Client(base_url=busy_server.url, timeout=120) as http:
            return http.post("/api/diagnoses", content=LOG_1MB, headers={"Content-Type": "text/plain"})

    with httpx.Client(base_url=busy_server.url, timeout=120) as http:
        expected = http.post("/api/diagnoses", content=LOG_1MB, headers={"Content-Type": "text/plain"}).json()["diagnosis"]
    from concurrent.futures import ThreadPoolExecutor

    with ThreadPoolExecutor(max_workers=6) as pool:
        results = [r.json()["diagnosis"] for r in pool.map(call, range(6))]
    assert all(
        (d["root_cause"]["id"], d["initiating_rank"]) == (expected["root_cause"]["id"], expected["initiating_rank"]) for d in results
    )
    assert expected["root_cause"]["id"] == "cuda-oom" and expected["initiating_rank"] == 5


def _many_parts(count: int) -> tuple[bytes, str]:
    boundary = "b0undary"
    parts = [
        f'--{boundary}\r\nContent-Disposition: form-data; name="file"; filename="node{i:05d}-x{i}.log"\r\n'
        f"Content-Type: text/plain\r\n\r\n[rank0]: step {i}\r\n"
        for i in range(count)
    ]
    return ("".join(parts) + f"--{boundary}--\r\n").encode(), boundary


def test_ten_thousand_file_parts_are_refused(busy_server: Server) -> None:
    body, boundary = _many_parts(10_000)
    assert len(body) < 2 << 20
    response = httpx.post(
        f"{busy_server.url}/api/diagnoses", content=body, timeout=120, headers={"Content-Type": f"multipart/form-data; boundary={boundary}"}
    )
    assert response.status_code == 413
    assert f"more than {MAX_FILES} files" in response.json()["error"]


def test_the_most_files_allowed_still_diagnose(busy_server: Server) -> None:
    body, boundary = _many_parts(MAX_FILES)
    response = httpx.post(
        f"{busy_server.url}/api/diagnoses", content=body, timeout=120, headers={"Content-Type": f"multipart/form-data; boundary={boundary}"}
    )
    assert response.status_code == 201, response.text
