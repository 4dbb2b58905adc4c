"""Every error case of the API over real HTTP: its status and the one JSON error shape."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from .conftest import EXAMPLE_OOM, TEST_UPLOAD_MB, TOKEN, diagnose_text, running_server

pytestmark = pytest.mark.server
PNG = b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR" + bytes(range(256)) * 8
OVER_LIMIT = b"[rank0]: step 1 loss 2.0\n" * ((TEST_UPLOAD_MB << 20) // 25 + 10)


def assert_error(response: httpx.Response, status: int, fragment: str) -> None:
    """The response is the error shape with this status, and its message says ``fragment``."""
    assert response.status_code == status, response.text
    assert response.headers["content-type"] == "application/json"
    body = response.json()
    assert set(body) == {"ok", "error", "status"}
    assert body["ok"] is False and body["status"] == status
    assert fragment.lower() in body["error"].lower(), body["error"]


def _chunks(data: bytes, size: int = 64 * 1024) -> Iterator[bytes]:
    for start in range(0, len(data), size):
        yield data[start : start + size]


UPLOAD_CASES = [
    pytest.param({"content": b"", "headers": {"Content-Type": "text/plain"}}, 400, "empty", id="empty-text"),
    pytest.param({"content": b" \n\n\t\n", "headers": {"Content-Type": "text/plain"}}, 400, "empty", id="blank-text"),
    pytest.param({"files": {"file": ("train.log", b"", "text/plain")}}, 400, "empty", id="empty-file"),
    pytest.param({"files": {"file": ("model.png", PNG, "image/png")}}, 400, "binary", id="binary-file"),
    pytest.param({"content": b"\x00\x01\x02" * 500, "headers": {"Content-Type": "text/plain"}}, 400, "binary", id="binary-text-body"),
    pytest.param(  # UTF-16 without its byte-order mark: nothing says how to read it
        {"content": "log line\n".encode("utf-16-le") * 50, "headers": {"Content-Type": "text/plain"}}, 400, "binary", id="utf16-no-bom"
    ),
    pytest.param({"json": {"log": "x"}}, 415, "text/plain", id="json-body"),
    pytest.param(
        {"content": b"[rank0]: x\n", "headers": {"Content-Type": "application/octet-stream"}}, 415, "multipart", id="octet-stream"
    ),
    pytest.param({"files": {"other": ("a.log", b"x\n", "text/plain")}}, 400, "`file` field", id="no-file-field"),
    pytest.param(
        {"content": b"--xyz\r\nnot a form", "headers": {"Content-Type": "multipart/form-data; boundary=xyz"}},
        400,
        "multipart",
        id="malformed-multipart",
    ),
    pytest.param({"content": b"x", "headers": {"Content-Type": "multipart/form-data"}}, 400, "boundary", id="multipart-no-boundary"),
    pytest.param({"content": OVER_LIMIT, "headers": {"Content-Type": "text/plain"}}, 413, f"{TEST_UPLOAD_MB} MB", id="too-large-declared"),
    pytest.param({"files": {"file": ("big.log", OVER_LIMIT, "text/plain")}}, 413, "limit", id="too-large-form"),
]


@pytest.mark.parametrize("path", ["/api/diagnoses", "/api/redactions"])
@pytest.mark.parametrize(("request_kwargs", "status", "fragment"), UPLOAD_CASES)
def test_bad_uploads(client: httpx.Client, path: str, request_kwargs: dict[str, object], status: int, fragment: str) -> None:
    assert_error(client.post(path, **request_kwargs), status, fragment)  # type: ignore[arg-type]


def test_a_utf16_upload_with_its_byte_order_mark_is_diagnosed_as_text(client: httpx.Client) -> None:
    """Windows PowerShell 5's ``>`` writes UTF-16LE with a byte-order mark: the upload is the log it encodes."""
    body = diagnose_text(client, EXAMPLE_OOM.read_text(encoding="utf-8").encode("utf-16"))
    diagnosis = body["diagnosis"]
    assert isinstance(diagnosis, dict)
    assert (diagnosis["root_cause"]["id"], diagnosis["initiating_rank"]) == ("cuda-oom", 5)


def test_bad_model_names(client: httpx.Client) -> None:
    text = {"content": b"[rank0]: x\n", "headers": {"Content-Type": "text/plain"}}
    assert_error(client.post("/api/diagnoses", params={"model": "x y;rm"}, **text), 400, "model")  # type: ignore[arg-type]
    form = {"file": ("a.log", b"[rank0]: x\n", "text/plain")}
    assert_error(client.post("/api/diagnoses", files=form, data={"model": "$(id)"}), 400, "model")


def test_too_large_streamed_without_length(client: httpx.Client) -> None:
    response = client.post("/api/diagnoses", content=_chunks(OVER_LIMIT), headers={"Content-Type": "text/plain"})
    assert "content-length" not in response.request.headers
    assert_error(response, 413, "limit")


def test_unknown_sessions_are_404(client: httpx.Client) -> None:
    for unknown in ("nope", "x" * 32, "y" * 500):
        assert_error(client.get(f"/api/sessions/{unknown}"), 404, "no such session")
        assert_error(client.delete(f"/api/sessions/{unknown}"), 404, "no such session")
        assert_error(client.post(f"/api/sessions/{unknown}/messages", json={"content": "why?"}), 404, "no such session")
        assert_error(
            client.post(f"/api/sessions/{unknown}/messages", json={"content": "why?"}, headers={"Accept": "text/event-stream"}),
            404,
            "no such session",
        )


@pytest.mark.parametrize(
    ("body", "fragment"),
    [
        ({"content": ""}, "content"),
        ({}, "content: field required"),
        ({"content": "x" * 4001}, "at most 4000"),
        ({"question": "why?"}, "content"),
    ],
)
def test_bad_questions_are_422(client: httpx.Client, body: dict[str, str], fragment: str) -> None:
    session_id = _session(client)
    assert_error(client.post(f"/api/sessions/{session_id}/messages", json=body), 422, fragment)


def test_question_that_is_not_json(client: httpx.Client) -> None:
    session_id = _session(client)
    response = client.post(f"/api/sessions/{session_id}/messages", content=b"{not json", headers={"Content-Type": "application/json"})
    assert_error(response, 422, "json")


def test_unknown_routes_and_methods(client: httpx.Client) -> None:
    assert_error(client.get("/api/kb/no-such-entry"), 404, "no encyclopedia entry")
    assert_error(client.get("/api/no-such-route"), 404, "not found")
    assert_error(client.put("/api/kb"), 405, "method not allowed")
    assert_error(client.get("/api/diagnoses"), 405, "method not allowed")


_SESSION: list[str] = []


def _session(client: httpx.Client) -> str:
    if not _SESSION:
        _SESSION.append(str(diagnose_text(client, EXAMPLE_OOM.read_text(encoding="utf-8"))["session_id"]))
    return _SESSION[0]


@pytest.fixture(scope="module")
def token_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[str, Path]]:
    """A server with DIAGNOSE_API_TOKEN set."""
    with running_server(tmp_path_factory.mktemp("token"), DIAGNOSE_API_TOKEN=TOKEN) as running:
        yield running.url, running.log_path


def test_api_token_is_required_when_set(token_server: tuple[str, Path]) -> None:
    url, log_path = token_server
    with httpx.Client(base_url=url, timeout=60) as http:
        for headers in ({}, {"Authorization": "Bearer wrong"}, {"Authorization": f"Basic {TOKEN}"}):
            response = http.get("/api/kb", headers=headers)
            assert_error(response, 401, "API token")
            assert response.headers["www-authenticate"] == "Bearer"
        assert_error(http.post("/api/diagnoses", content=b"x\n", headers={"Content-Type": "text/plain"}), 401, "token")
        good = {"Authorization": f"Bearer {TOKEN}"}
        assert http.get("/api/kb", headers=good).status_code == 200
        created = http.post("/api/diagnoses", content=EXAMPLE_OOM.read_bytes(), headers={**good, "Content-Type": "text/plain"})
        assert created.status_code == 201
        assert http.get("/healthz").status_code == 200
        assert http.get("/").status_code == 200
    log = log_path.read_text()
    assert "API token required" in log
    assert TOKEN not in log
