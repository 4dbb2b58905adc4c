"""Tools for the load and attack tests (and bench/bench_web_load.py): logs of a given size, a server's RSS,
a raw client that pushes a huge body, concurrent uploads."""

from __future__ import annotations

import random
import select
import socket
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import urlsplit

import httpx

EXAMPLE_OOM = Path(__file__).resolve().parents[2] / "examples" / "multi-rank-oom.log"
STEP = "[rank{r}]:[I1202 10:{m:02d}:{s:02d}.{us:06d} train.py:{fl}] step {step} | loss {loss:.4f} | grad_norm {g:.3f} | tokens/s {tok}\n"


def sized_log(size: int, seed: int = 1) -> bytes:
    """A multi-rank OOM log of about ``size`` bytes: training steps from 8 ranks, then the OOM example's failure."""
    rng = random.Random(seed)
    tail = EXAMPLE_OOM.read_bytes()
    lines, total, step = [], len(tail), 0
    while total < size:
        line = STEP.format(
            r=step % 8,
            m=step // 60000 % 60,
            s=step // 1000 % 60,
            us=rng.randrange(10**6),
            fl=rng.randrange(900),
            step=step,
            loss=rng.uniform(1, 3),
            g=rng.uniform(0, 2),
            tok=rng.randrange(10**5),
        ).encode()
        lines.append(line)
        total += len(line)
        step += 1
    return b"".join(lines) + tail


def rss_bytes(pid: int) -> int:
    """The resident set size of a process, from /proc/<pid>/status."""
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) * 1024
    raise AssertionError(f"no VmRSS for {pid}")


@dataclass
class Pushed:
    """What happened to a pushed body: the status line the server answered (if read) and the bytes sent."""

    status: int | None
    sent: int
    answer: bytes


def _complete(answer: bytes) -> bool:
    """Whether a response's head and its Content-Length worth of body have arrived."""
    head, sep, body = answer.partition(b"\r\n\r\n")
    if not sep:
        return False
    length = next((int(line.split(b":", 1)[1]) for line in head.split(b"\r\n") if line.lower().startswith(b"content-length:")), 0)
    return len(body) >= length


def push_body(url: str, path: str, total: int, *, chunked: bool, headers: dict[str, str] | None = None, piece: int = 16 * 1024) -> Pushed:
    """POST a body of ``total`` bytes (declared, or chunked) in small pieces, stopping as soon as the server answers or hangs up."""
    parts = urlsplit(url)
    head = [f"POST {path} HTTP/1.1", f"Host: {parts.netloc}", "Content-Type: application/json"]
    head += [f"{k}: {v}" for k, v in (headers or {}).items()]
    head.append("Transfer-Encoding: chunked" if chunked else f"Content-Length: {total}")
    data = b"x" * piece
    frame = b"%x\r\n%s\r\n" % (piece, data) if chunked else data
    sent, answer = 0, b""
    with socket.create_connection((parts.hostname, parts.port), timeout=10) as sock:
        sock.sendall(("\r\n".join(head) + "\r\n\r\n").encode())
        try:
            while sent < total:
                readable, _, _ = select.select([sock], [], [], 0.001 if sent else 0.5)
                if readable:
                    break
                sock.sendall(frame)
                sent += piece
        except OSError:
            pass
        try:
            sock.settimeout(5)
            while not _complete(answer):
                got = sock.recv(4096)
                if not got:
                    break
                answer += got
        except OSError:
            pass
    status = int(answer.split(b" ", 2)[1]) if answer.startswith(b"HTTP/1.1 ") else None
    return Pushed(status, sent, answer)


@dataclass
class Outcome:
    """One request of a concurrent batch."""

    status: int
    retry_after: str | None
    seconds: float


def concurrently(count: int, call: Callable[[int], httpx.Response], workers: int | None = None) -> list[Outcome]:
    """Run ``call(i)`` for i < count from ``workers`` threads at once; each response's status, Retry-After and time."""
    import time

    def one(i: int) -> Outcome:
        started = time.perf_counter()
        response = call(i)
        return Outcome(response.status_code, response.headers.get("retry-after"), time.perf_counter() - started)

    with ThreadPoolExecutor(max_workers=workers or count) as pool:
        return list(pool.map(one, range(count)))


def upload(url: str, log: bytes, headers: dict[str, str] | None = None) -> Callable[[int], httpx.Response]:
    """A call for ``concurrently``: POST the log to /api/diagnoses on a fresh connection."""

    def call(_: int) -> httpx.Response:
        with httpx.Client(base_url=url, timeout=120) as http:
            return http.post("/api/diagnoses", content=log, headers={"Content-Type": "text/plain", **(headers or {})})

    return call
