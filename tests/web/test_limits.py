"""Issue 16, items 1, 5 and 8: what an attacker can make the server read, parse or hold before it says no.

Real ``diagnose serve`` processes; the server's memory is read from /proc/<pid>/status.
"""

from __future__ import annotations

import socket
import threading
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from diagnose.web.protocol import MAX_HEAD_BYTES, MAX_HEADERS

from .conftest import EXAMPLE_OOM, TOKEN, Server, diagnose_text, running_server
from .load import push_body, rss_bytes

pytestmark = pytest.mark.server
GB = 1 << 30
MB = 1 << 20


@pytest.fixture(scope="module")
def open_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    """A loopback server without a token."""
    with running_server(tmp_path_factory.mktemp("open")) as server:
        yield server


@pytest.fixture(scope="module")
def token_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    """A server with an API token."""
    with running_server(tmp_path_factory.mktemp("token"), DIAGNOSE_API_TOKEN=TOKEN) as server:
        yield server


@pytest.mark.parametrize("chunked", [False, True], ids=["declared", "chunked"])
def test_a_gigabyte_message_without_token_is_refused_before_it_is_read(token_server: Server, chunked: bool) -> None:
    before = rss_bytes(token_server.process.pid)
    pushed = push_body(token_server.url, "/api/sessions/abc/messages", GB, chunked=chunked)
    assert pushed.status == 401, pushed.answer[:200]
    assert pushed.sent < 64 * MB  # the server answered long before the body was in
    assert rss_bytes(token_server.process.pid) - before < 20 * MB


@pytest.mark.parametrize("chunked", [False, True], ids=["declared", "chunked"])
def test_a_gigabyte_message_on_the_open_server_is_413(open_server: Server, chunked: bool) -> None:
    session_id = diagnose_text(httpx.Client(base_url=open_server.url, timeout=60), EXAMPLE_OOM.read_bytes())["session_id"]
    before = rss_bytes(open_server.process.pid)
    pushed = push_body(open_server.url, f"/api/sessions/{session_id}/messages", GB, chunked=chunked)
    assert pushed.sent < 64 * MB
    assert pushed.status in (413, None), pushed.answer[:200]  # None: hung up mid-body (after reading 32 KB)
    if not chunked:
        assert pushed.status == 413  # declared: refused on the headers alone
    assert rss_bytes(open_server.process.pid) - before < 20 * MB
    assert httpx.get(f"{open_server.url}/healthz").status_code == 200


def test_uploads_over_the_limit_are_refused_on_the_declared_length(token_server: Server) -> None:
    pushed = push_body(token_server.url, "/api/diagnoses", GB, chunked=False, headers={"Authorization": f"Bearer {TOKEN}"})
    assert pushed.status == 413 and b"max_upload_mb" in pushed.answer
    assert pushed.sent == 0


def _huge_header(url: str, size: int, done: dict[str, bytes]) -> None:
    host, port = url.removeprefix("http://").split(":")
    with socket.create_connection((host, int(port)), timeout=30) as sock:
        sock.sendall(b"GET /healthz HTTP/1.1\r\nHost: localhost\r\nX-Big: ")
        try:
            for _ in range(size // MB):
                sock.sendall(b"a" * MB)
        except OSError:
            pass
        try:
            done["answer"] = sock.recv(200)
        except OSError as exc:
            done["answer"] = str(exc).encode()


def test_a_60_mb_header_is_refused_and_healthz_keeps_answering(open_server: Server) -> None:
    done: dict[str, bytes] = {}
    attacker = threading.Thread(target=_huge_header, args=(open_server.url, 60 * MB, done))
    attacker.start()
    with httpx.Client(base_url=open_server.url, timeout=30) as http:
        answers = [http.get("/healthz").status_code for _ in range(20)]
    attacker.join(timeout=60)
    assert answers == [200] * 20
    assert done["answer"].startswith(b"HTTP/1.1 431"), done


def test_too_many_header_fields_are_refused(open_server: Server) -> None:
    with socket.create_connection(("127.0.0.1", int(open_server.url.rsplit(":", 1)[1])), timeout=10) as sock:
        fields = b"".join(b"X-F%d: 1\r\n" % i for i in range(MAX_HEADERS + 1))
        sock.sendall(b"GET /healthz HTTP/1.1\r\nHost: localhost\r\n" + fields + b"\r\n")
        assert sock.recv(200).startswith(b"HTTP/1.1 431")
    assert MAX_HEAD_BYTES <= 64 * 1024


def test_a_client_that_never_finishes_its_request_is_let_go(open_server: Server) -> None:
    """Half a request line: the server closes the connection (after its head timeout) instead of holding it."""
    with socket.create_connection(("127.0.0.1", int(open_server.url.rsplit(":", 1)[1])), timeout=60) as sock:
        sock.sendall(b"GET /healthz HTTP/1.1\r\nHost: loc")
        answer = sock.recv(200)
        assert answer.startswith(b"HTTP/1.1 408")
        assert sock.recv(200) == b""  # closed


def test_many_slow_clients_are_let_go_while_others_are_served(open_server: Server) -> None:
    """Slowloris: 500 connections each holding half a request; /healthz keeps answering and all 500 are closed."""
    port = int(open_server.url.rsplit(":", 1)[1])
    held = [socket.create_connection(("127.0.0.1", port), timeout=60) for _ in range(500)]
    try:
        for sock in held:
            sock.sendall(b"GET /healthz HTTP/1.1\r\nHost: lo")
        assert [httpx.get(f"{open_server.url}/healthz").status_code for _ in range(5)] == [200] * 5
        answers = [sock.recv(200) for sock in held]  # blocks until the server answers or closes each one
        assert all(a.startswith(b"HTTP/1.1 408") or a == b"" for a in answers)
    finally:
        for sock in held:
            sock.close()


def test_a_body_that_stops_coming_is_408(open_server: Server) -> None:
    """A body that stalls part way: 408 once the per-piece wait runs out, not a connection held forever."""
    with socket.create_connection(("127.0.0.1", int(open_server.url.rsplit(":", 1)[1])), timeout=90) as sock:
        sock.sendall(
            b"POST /api/redactions HTTP/1.1\r\nHost: localhost\r\nContent-Type: text/plain\r\n"
            b"Content-Length: 100000\r\n\r\n[rank0]: hello\n"
        )
        answer = sock.recv(400)
    assert answer.startswith(b"HTTP/1.1 408"), answer


def test_docs_and_schema_need_the_token(token_server: Server) -> None:
    with httpx.Client(base_url=token_server.url, timeout=30) as http:
        assert http.get("/openapi.json").status_code == 401
        assert http.get("/openapi.json", headers={"Authorization": f"Bearer {TOKEN}"}).status_code == 200
        assert http.get("/docs").status_code == 404 and http.get("/redoc").status_code == 404
        assert http.get("/").status_code == 200 and http.get("/healthz").status_code == 200


def test_a_multipart_body_cut_before_its_closing_boundary_is_400(open_server: Server) -> None:
    body = b'--xyz\r\nContent-Disposition: form-data; name="file"; filename="a.log"\r\n\r\n' + EXAMPLE_OOM.read_bytes()
    response = httpx.post(
        f"{open_server.url}/api/diagnoses", content=body, headers={"Content-Type": "multipart/form-data; boundary=xyz"}, timeout=60
    )
    assert response.status_code == 400 and "closing boundary" in response.json()["error"]


def test_a_file_under_another_field_name_says_so(open_server: Server) -> None:
    response = httpx.post(f"{open_server.url}/api/diagnoses", files={"log": ("a.log", b"[rank0]: x\n", "text/plain")}, timeout=60)
    assert response.status_code == 400
    assert "as field 'log'" in response.json()["error"] and "`file` field" in response.json()["error"]


def test_the_access_log_holds_no_session_id_or_query(open_server: Server, tmp_path: Path) -> None:
    with httpx.Client(base_url=open_server.url, timeout=60) as http:
        session_id = str(diagnose_text(http, EXAMPLE_OOM.read_bytes())["session_id"])
        http.post(f"/api/sessions/{session_id}/messages", json={"content": "why?"}, params={"k": "query-secret-1"})
        http.delete(f"/api/sessions/{session_id}")
    log = open_server.log_text()
    assert "/api/sessions/<id>/messages" in log and "DELETE /api/sessions/<id>" in log
    assert session_id not in log and "query-secret-1" not in log
