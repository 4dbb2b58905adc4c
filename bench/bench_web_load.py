"""The web service under load: concurrent uploads of 1 MB logs, then chat messages over many sessions.

    python bench/bench_web_load.py --uploads 32 --concurrency 8 --messages 500 --sessions 20

Starts its own ``diagnose serve`` on a free loopback port (fresh DIAGNOSE_HOME, no model, no vector
index unless --retrieval), so nothing else is measured. Phase 1 posts ``--uploads`` 1 MB logs,
``--concurrency`` at a time: requests/s, p50/p95 latency, how many got 201, 503 (with Retry-After)
or anything else. Phase 2 opens ``--sessions`` sessions and sends ``--messages`` follow-ups over
them (4 at a time): p50/p95 of the first and the last 100 messages, to show latency stays flat as
histories fill. One warm-up upload comes first (its time is printed apart). Peak server RSS (sampled
from /proc every 20 ms) for each phase. Every phase stops after ``--max-seconds``. Prints the date
and the commit first.
"""

from __future__ import annotations

import argparse
import datetime
import os
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import httpx

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))
from tests.servers import free_port  # noqa: E402
from tests.web.conftest import serve_argv, server_env  # noqa: E402
from tests.web.load import rss_bytes, sized_log  # noqa: E402

QUESTIONS = ["Why rank 5?", "Show me the evidence", "How do I fix it?", "What is on rank 3 lines?", "What else could it be?"]


class PeakRss:
    """Samples a process's RSS in a thread; ``peak`` in bytes."""

    def __init__(self, pid: int) -> None:
        self.pid, self.peak, self._stop = pid, 0, threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)

    def _run(self) -> None:
        while not self._stop.is_set():
            self.peak = max(self.peak, rss_bytes(self.pid))
            time.sleep(0.02)

    def __enter__(self) -> PeakRss:
        self._thread.start()
        return self

    def __exit__(self, *_: object) -> None:
        self._stop.set()
        self._thread.join()


def _quantiles(values: list[float]) -> str:
    if not values:
        return "n/a"
    ordered = sorted(values)
    p95 = ordered[min(len(ordered) - 1, int(len(ordered) * 0.95))]
    return f"p50 {statistics.median(ordered) * 1000:.0f} ms, p95 {p95 * 1000:.0f} ms"


def uploads(url: str, pid: int, count: int, concurrency: int, max_seconds: float) -> list[str]:
    """Phase 1: ``count`` uploads of a 1 MB log, ``concurrency`` at a time; the session ids created."""
    log = sized_log(1 << 20)
    deadline = time.monotonic() + max_seconds
    results: list[tuple[int, float, str | None, str]] = []

    def one(_: int) -> tuple[int, float, str | None, str]:
        if time.monotonic() > deadline:
            return (0, 0.0, None, "")
        started = time.perf_counter()
        with httpx.Client(base_url=url, timeout=120) as http:
            response = http.post("/api/diagnoses", content=log, headers={"Content-Type": "text/plain"})
        session = response.json().get("session_id", "") if response.status_code == 201 else ""
        return (response.status_code, time.perf_counter() - started, response.headers.get("retry-after"), session)

    with PeakRss(pid) as rss:
        started = time.perf_counter()
        with ThreadPoolExecutor(max_workers=concurrency) as pool:
            results = [r for r in pool.map(one, range(count)) if r[0]]
        elapsed = time.perf_counter() - started
    statuses = [r[0] for r in results]
    ok = [r[1] for r in results if r[0] == 201]
    busy = [r for r in results if r[0] == 503]
    other = [s for s in statuses if s not in (201, 503)]
    print(
        f"uploads: {len(results)} x {len(log) / (1 << 20):.1f} MB, {concurrency} at once: {len(ok)} x 201, "
        f"{len(busy)} x 503 (all with Retry-After: {all(r[2] for r in busy)}), {len(other)} errors {sorted(set(other))}"
    )
    print(
        f"uploads: {len(ok) / elapsed:.2f} diagnoses/s, {len(results) / elapsed:.2f} requests/s; 201 latency {_quantiles(ok)}; "
        f"peak server RSS {rss.peak / (1 << 20):.0f} MB"
    )
    return [r[3] for r in results if r[3]]


def chat(url: str, pid: int, sessions: list[str], messages: int, max_seconds: float) -> None:
    """Phase 2: ``messages`` follow-ups spread over the sessions, 4 at a time; latency of the first and last 100."""
    deadline = time.monotonic() + max_seconds
    client = httpx.Client(base_url=url, timeout=60, limits=httpx.Limits(max_connections=8))

    def one(i: int) -> tuple[int, int, float]:
        if time.monotonic() > deadline:
            return (i, 0, 0.0)
        session = sessions[i % len(sessions)]
        started = time.perf_counter()
        response = client.post(f"/api/sessions/{session}/messages", json={"content": QUESTIONS[i % len(QUESTIONS)]})
        return (i, response.status_code, time.perf_counter() - started)

    with PeakRss(pid) as rss, ThreadPoolExecutor(max_workers=4) as pool:
        results = [r for r in pool.map(one, range(messages)) if r[1]]
    client.close()
    errors = [r for r in results if r[1] != 200]
    times = [r[2] for r in sorted(results)]
    print(
        f"chat: {len(results)} messages over {len(sessions)} sessions: {len(errors)} errors; "
        f"first 100 {_quantiles(times[:100])}; last 100 {_quantiles(times[-100:])}; peak server RSS {rss.peak / (1 << 20):.0f} MB"
    )
    with httpx.Client(base_url=url, timeout=60) as http:
        info = http.get("/api/info").json()
        history = len(http.get(f"/api/sessions/{sessions[0]}").json()["history"])
    print(
        f"store: {info['sessions']} sessions, {info['session_bytes'] / 1024:.0f} KB held (budget {info['max_memory_mb']} MB); "
        f"history of one session: {history} messages"
    )


def main() -> None:
    """Run both phases against a fresh server and print the figures."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--uploads", type=int, default=32, help="uploads in phase 1 (at most 200)")
    parser.add_argument("--concurrency", type=int, default=8, help="uploads at once (at most 64)")
    parser.add_argument("--messages", type=int, default=500, help="chat messages in phase 2 (at most 5000)")
    parser.add_argument("--sessions", type=int, default=20, help="sessions the messages are spread over")
    parser.add_argument("--max-seconds", type=float, default=300, help="stop a phase after this long")
    parser.add_argument("--retrieval", action="store_true", help="with the vector index (built at start)")
    parser.add_argument("--redis-url", help="use this Redis for sessions (e.g. redis://127.0.0.1:6379/0)")
    args = parser.parse_args()
    count, concurrency, messages = min(args.uploads, 200), min(args.concurrency, 64), min(args.messages, 5000)
    commit = subprocess.run(["git", "rev-parse", "--short", "HEAD"], capture_output=True, text=True, cwd=REPO, check=False).stdout.strip()
    dirty = subprocess.run(["git", "status", "--porcelain"], capture_output=True, text=True, cwd=REPO, check=False).stdout.strip()
    print(
        f"# {datetime.datetime.now(datetime.UTC):%Y-%m-%d %H:%M} UTC commit {commit}{'+dirty' if dirty else ''}, {os.cpu_count()} CPUs",
        flush=True,
    )
    with tempfile.TemporaryDirectory(prefix="bench-web-") as root:
        home, tmp = Path(root) / "home", Path(root) / "tmp"
        home.mkdir()
        tmp.mkdir()
        port = free_port()
        url = f"http://127.0.0.1:{port}"
        extra = {"DIAGNOSE_RETRIEVAL": "1" if args.retrieval else "0"}
        if args.redis_url:
            extra["DIAGNOSE_REDIS_URL"] = args.redis_url
        with (Path(root) / "server.log").open("wb") as log:
            server = subprocess.Popen(
                serve_argv("--port", str(port)), stdout=log, stderr=subprocess.STDOUT, cwd=REPO, env=server_env(home, tmp, **extra)
            )
        try:
            deadline = time.monotonic() + 120
            while time.monotonic() < deadline:
                try:
                    if httpx.get(f"{url}/healthz", timeout=2).status_code == 200:
                        break
                except httpx.TransportError:
                    time.sleep(0.2)
            print(
                f"server: pid {server.pid}, idle RSS {rss_bytes(server.pid) / (1 << 20):.0f} MB, "
                f"store {'redis' if args.redis_url else 'memory'}, retrieval {args.retrieval}"
            )
            with httpx.Client(base_url=url, timeout=120) as http:  # the first diagnosis loads and compiles the signatures
                started = time.perf_counter()
                http.post("/api/diagnoses", content=sized_log(1 << 20), headers={"Content-Type": "text/plain"})
                print(f"warm-up: first 1 MB upload {time.perf_counter() - started:.2f} s (not counted below)")
            created = uploads(url, server.pid, count, concurrency, args.max_seconds)
            with httpx.Client(base_url=url, timeout=120) as http:
                small = (REPO / "examples" / "multi-rank-oom.log").read_bytes()
                while len(created) < args.sessions:
                    created.append(http.post("/api/diagnoses", content=small, headers={"Content-Type": "text/plain"}).json()["session_id"])
            chat(url, server.pid, created[: args.sessions], messages, args.max_seconds)
        finally:
            server.terminate()
            server.wait(timeout=30)


if __name__ == "__main__":
    main()
