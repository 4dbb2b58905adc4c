"""Issue 16, items 6 and 8: a web page elsewhere cannot drive the token-less loopback server through the
user's browser, and ``uvicorn --factory`` gets the same loopback/token rules as ``diagnose serve``."""

from __future__ import annotations

import socket
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from tests.servers import free_port, http_ok, running

from .conftest import EXAMPLE_OOM, REPO, TOKEN, Server, running_server, server_env

pytestmark = pytest.mark.server
OOM = EXAMPLE_OOM.read_bytes()


@pytest.fixture(scope="module")
def open_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    with running_server(tmp_path_factory.mktemp("origin")) as server:
        yield server


def _post(server: Server, headers: dict[str, str]) -> httpx.Response:
    return httpx.post(f"{server.url}/api/diagnoses", content=OOM, headers={"Content-Type": "text/plain", **headers}, timeout=60)


@pytest.mark.parametrize(
    "headers",
    [
        {"Origin": "https://evil.example"},
        {"Origin": "null"},
        {"Origin": "http://127.0.0.1:1"},  # another port is another origin
        {"Sec-Fetch-Site": "cross-site"},
        {"Sec-Fetch-Site": "same-site"},
    ],
)
def test_cross_origin_posts_are_refused(open_server: Server, headers: dict[str, str]) -> None:
    response = _post(open_server, headers)
    assert response.status_code == 403 and "cross-origin" in response.json()["error"]


def test_a_cross_site_form_cannot_open_a_session_or_ask(open_server: Server) -> None:
    session_id = _post(open_server, {}).json()["session_id"]
    evil = {"Origin": "https://evil.example", "Sec-Fetch-Site": "cross-site"}
    asked = httpx.post(f"{open_server.url}/api/sessions/{session_id}/messages", json={"content": "why?"}, headers=evil)
    deleted = httpx.delete(f"{open_server.url}/api/sessions/{session_id}", headers=evil)
    assert (asked.status_code, deleted.status_code) == (403, 403)
    assert httpx.get(f"{open_server.url}/api/sessions/{session_id}").json()["history"] == []


def test_same_origin_and_non_browser_clients_are_served(open_server: Server) -> None:
    host = open_server.url.removeprefix("http://")
    assert _post(open_server, {"Origin": open_server.url, "Sec-Fetch-Site": "same-origin"}).status_code == 201
    assert _post(open_server, {}).status_code == 201  # curl sends neither header
    assert _post(open_server, {"Origin": f"http://{host}"}).status_code == 201


def test_a_foreign_host_name_is_refused_without_a_token(open_server: Server) -> None:
    """DNS rebinding: a page on attacker.example resolving to 127.0.0.1 still says Host: attacker.example."""
    response = httpx.get(f"{open_server.url}/api/info", headers={"Host": "attacker.example"})
    assert response.status_code == 403 and "Host" in response.json()["error"]
    assert httpx.get(f"{open_server.url}/api/info", headers={"Host": "localhost"}).status_code == 200


def _outside_address() -> str | None:
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as probe:
        try:
            probe.connect(("10.255.255.255", 1))
        except OSError:
            return None
        address = str(probe.getsockname()[0])
    return None if address.startswith("127.") else address


def test_the_factory_entry_refuses_requests_off_loopback_without_a_token(tmp_path: Path) -> None:
    outside = _outside_address()
    if outside is None:
        pytest.skip("no non-loopback address on this machine")
    port = free_port()
    argv = [sys.executable, "-m", "uvicorn", "--factory", "diagnose.web:app_from_env", "--host", "0.0.0.0", "--port", str(port)]
    (tmp_path / "home").mkdir()
    with running(
        argv,
        log_path=tmp_path / "factory.log",
        ready=http_ok(f"http://127.0.0.1:{port}/healthz"),
        what="uvicorn",
        cwd=REPO,
        env=server_env(tmp_path / "home", tmp_path),
    ):
        refused = httpx.get(f"http://{outside}:{port}/api/info")
        assert refused.status_code == 403 and "DIAGNOSE_API_TOKEN" in refused.json()["error"]
        posted = httpx.post(f"http://{outside}:{port}/api/diagnoses", content=OOM, headers={"Content-Type": "text/plain"})
        assert posted.status_code == 403


def test_the_factory_entry_refuses_a_weak_token_in_one_line(tmp_path: Path) -> None:
    argv = [sys.executable, "-m", "uvicorn", "--factory", "diagnose.web:app_from_env", "--port", str(free_port())]
    (tmp_path / "home").mkdir()
    done = subprocess.run(
        argv, cwd=REPO, env=server_env(tmp_path / "home", tmp_path, DIAGNOSE_API_TOKEN="a"), capture_output=True, text=True, timeout=60
    )
    assert done.returncode != 0
    assert "DIAGNOSE_API_TOKEN" in done.stderr and "Traceback" not in done.stderr


def test_with_a_token_the_factory_serves_off_loopback(tmp_path: Path) -> None:
    outside = _outside_address()
    if outside is None:
        pytest.skip("no non-loopback address on this machine")
    port = free_port()
    argv = [sys.executable, "-m", "uvicorn", "--factory", "diagnose.web:app_from_env", "--host", "0.0.0.0", "--port", str(port)]
    (tmp_path / "home").mkdir()
    env = server_env(tmp_path / "home", tmp_path, DIAGNOSE_API_TOKEN=TOKEN)
    with running(
        argv, log_path=tmp_path / "factory.log", ready=http_ok(f"http://127.0.0.1:{port}/healthz"), what="uvicorn", cwd=REPO, env=env
    ):
        assert httpx.get(f"http://{outside}:{port}/api/info").status_code == 401
        assert httpx.get(f"http://{outside}:{port}/api/info", headers={"Authorization": f"Bearer {TOKEN}"}).status_code == 200
