"""Real server processes for tests: a free loopback port, a readiness wait, a clean stop."""

from __future__ import annotations

import socket
import subprocess
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import httpx
import pytest


def free_port() -> int:
    """A TCP port free on 127.0.0.1 right now."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def http_ok(url: str) -> Callable[[], bool]:
    """A readiness probe: ``url`` answers 200."""

    def probe() -> bool:
        try:
            return httpx.get(url, timeout=2.0).status_code == 200
        except httpx.TransportError:
            return False

    return probe


def stop(process: subprocess.Popen[bytes]) -> None:
    """SIGTERM, then SIGKILL if it does not exit within 15 s."""
    process.terminate()
    try:
        process.wait(timeout=15)
    except subprocess.TimeoutExpired:
        process.kill()
        process.wait(timeout=15)


@contextmanager
def running(
    argv: list[str], *, log_path: Path, ready: Callable[[], bool], what: str, timeout_s: float = 60.0, **popen: Any
) -> Iterator[subprocess.Popen[bytes]]:
    """Start ``argv`` with its output in ``log_path``, wait until ``ready()``, stop it on exit.

    The test fails (with the end of the log) if the process exits or is not ready in time.
    """
    with log_path.open("wb") as log:
        process = subprocess.Popen(argv, stdout=log, stderr=subprocess.STDOUT, **popen)
    try:
        deadline = time.monotonic() + timeout_s
        while not ready():
            if process.poll() is not None:
                pytest.fail(f"{what} exited with {process.returncode}:\n{log_path.read_text(errors='replace')[-3000:]}")
            if time.monotonic() > deadline:
                pytest.fail(f"{what} not ready after {timeout_s} s:\n{log_path.read_text(errors='replace')[-3000:]}")
            time.sleep(0.1)
        yield process
    finally:
        stop(process)
