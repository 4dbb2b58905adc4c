"""Real servers for the web tests: ``diagnose serve`` (uvicorn) and ``redis-server`` in subprocesses on free loopback ports.

Each server gets its own DIAGNOSE_HOME and TMPDIR under pytest's tmp_path, no model, and
DIAGNOSE_RETRIEVAL=0 (no vector index to build); its stdout and stderr go to a file the
tests can read.
"""

from __future__ import annotations

import os
import shutil
import socket
import subprocess
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

import httpx
import pytest

from tests.servers import free_port, http_ok, running

REPO = Path(__file__).resolve().parents[2]
EXAMPLE_OOM = REPO / "examples" / "multi-rank-oom.log"
READY_TIMEOUT_S = 60.0
TEST_UPLOAD_MB = 1
TOKEN = "Xq3vN8rT1mK6pW2sL9dF4hJ7bC5yZ0aG-eUiOoQwRt_"
"""An API token strong enough for the server (43 URL-safe characters, like ``diagnose serve --new-token``)."""

# `diagnose serve` exactly as the CLI registers it (independent of how diagnose.cli wires its groups).
SERVE = (
    "import typer\nfrom diagnose.cli import serve\napp = typer.Typer()\napp.callback()(lambda: None)\n"
    "serve.register(app)\napp(prog_name='diagnose')"
)


def serve_argv(*args: str) -> list[str]:
    """The command line of ``diagnose serve ARGS``."""
    return [sys.executable, "-c", SERVE, "serve", *args]


def server_env(home: Path, tmp: Path, **extra: str) -> dict[str, str]:
    """The environment of a test server: the caller's, minus every DIAGNOSE_* switch, plus ``extra``."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("DIAGNOSE_")}
    env.update(DIAGNOSE_HOME=str(home), DIAGNOSE_RETRIEVAL="0", TMPDIR=str(tmp), PYTHONPATH=str(REPO), PYTHONUNBUFFERED="1", NO_COLOR="1")
    env.update(extra)
    return env


@dataclass
class Server:
    """A running server: its URL, data dir, temp dir and log file."""

    url: str
    home: Path
    tmp: Path
    log_path: Path
    process: subprocess.Popen[bytes]

    def log_text(self) -> str:
        """Everything the server printed so far."""
        return self.log_path.read_text(encoding="utf-8", errors="replace")


@contextmanager
def running_server(root: Path, *args: str, config_toml: str = "", **env: str) -> Iterator[Server]:
    """Start ``diagnose serve --port <free> ARGS`` with its own home under ``root``; stop it afterwards."""
    home, tmp = root / "home", root / "tmp"
    home.mkdir(parents=True, exist_ok=True)
    tmp.mkdir(parents=True, exist_ok=True)
    if config_toml:
        (home / "config.toml").write_text(config_toml, encoding="utf-8")
    port = free_port()
    url = f"http://127.0.0.1:{port}"
    with running(
        serve_argv("--port", str(port), *args),
        log_path=root / "server.log",
        ready=http_ok(f"{url}/healthz"),
        what="the server",
        timeout_s=READY_TIMEOUT_S,
        cwd=REPO,
        env=server_env(home, tmp, **env),
    ) as process:
        yield Server(url, home, tmp, root / "server.log", process)


@pytest.fixture(scope="session")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    """One server for the API tests, with ``max_upload_mb = 1`` set in its config.toml."""
    with running_server(tmp_path_factory.mktemp("web"), config_toml=f"max_upload_mb = {TEST_UPLOAD_MB}\n") as running:
        yield running


@pytest.fixture(scope="session")
def client(server: Server) -> Iterator[httpx.Client]:
    """An HTTP client for the shared server."""
    with httpx.Client(base_url=server.url, timeout=60.0) as http:
        yield http


@pytest.fixture
def redis_url(tmp_path: Path) -> Iterator[str]:
    """A throwaway ``redis-server`` on a free loopback port, nothing saved to disk; skipped when not installed."""
    binary = shutil.which("redis-server")
    if binary is None:
        pytest.skip("redis-server is not installed (apt-get install redis-server); the shared session store is untested")
    port = free_port()
    argv = [binary, "--port", str(port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no", "--dir", str(tmp_path)]
    with running(argv, log_path=tmp_path / "redis.log", ready=lambda: _redis_pong(port), what="redis-server", timeout_s=20):
        yield f"redis://127.0.0.1:{port}/0"


def _redis_pong(port: int) -> bool:
    try:
        with socket.create_connection(("127.0.0.1", port), timeout=1) as sock:
            sock.sendall(b"PING\r\n")
            return sock.recv(16).startswith(b"+PONG")
    except OSError:
        return False


def diagnose_text(http: httpx.Client, text: str | bytes) -> dict[str, object]:
    """POST a log as text/plain; the JSON of the 201 answer."""
    response = http.post("/api/diagnoses", content=text, headers={"Content-Type": "text/plain"})
    assert response.status_code == 201, response.text
    return response.json()  # type: ignore[no-any-return]


def read_events(response: httpx.Response) -> list[tuple[str, object]]:
    """The (event, data) pairs of a server-sent-events response."""
    import json

    events = []
    for block in response.text.split("\n\n"):
        if not block.strip():
            continue
        name = next(line[6:].strip() for line in block.splitlines() if line.startswith("event:"))
        data = "".join(line[5:].strip() for line in block.splitlines() if line.startswith("data:"))
        events.append((name, json.loads(data)))
    return events


CHROMIUM = Path("/usr/bin/chromium")
CHROMIUM_ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
]
"""Debian's Chromium, driven by playwright (no browser download)."""


@pytest.fixture(scope="module")
def browser() -> Iterator[object]:
    """A headless Chromium for the page tests; they skip with a message when Chromium or playwright is absent."""
    if not CHROMIUM.exists():
        pytest.skip("/usr/bin/chromium is absent (apt-get install chromium); the browser test needs Debian's Chromium")
    sync_api = pytest.importorskip("playwright.sync_api", reason="the playwright Python package is not installed")
    with sync_api.sync_playwright() as playwright:
        chromium = playwright.chromium.launch(executable_path=str(CHROMIUM), args=CHROMIUM_ARGS)
        yield chromium
        chromium.close()
