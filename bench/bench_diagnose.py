"""End-to-end throughput and memory of ``diagnose log --json`` on generated multi-rank logs.

    python bench/bench_diagnose.py --sizes 200 1000 --shape glog --ranks 64

For each size: generates the log (bench/generate_log.py; ``glog`` is the shape users' torchrun logs
have: ``[rankN]:[I1202 hh:mm:ss.us file:line] step ... loss ...``, one OOM buried late), times plain
reading and ``grep -cE`` over the same file in the same run, then runs ``diagnose log --json`` in a
subprocess ``--runs`` times (start-up included; all cores, or one with ``--one-core``: diagnose scans
the next block on a second core) and reports the median's MB/s, the ratio to grep, the first run (which
also fills the pattern-database cache), peak RSS and whether the planted root cause and rank were found.
Targets: >= 100 MB/s and >= 0.15 of grep at 200 MB;
peak RSS <= 300 MB at 1 GB.
"""

from __future__ import annotations

import argparse
import datetime
import json
import os
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))
from generate_log import generate


def _plain_read(path: str) -> float:
    started = time.perf_counter()
    with open(path, "rb") as handle:
        while handle.read(1 << 20):
            pass
    return time.perf_counter() - started


def _grep(path: str) -> float:
    started = time.perf_counter()
    subprocess.run(
        ["grep", "-cE", "out of memory|Watchdog caught|Traceback|NCCL WARN|Segmentation fault", path], capture_output=True, check=False
    )
    return time.perf_counter() - started


def run(size_mb: int, ranks: int, workdir: Path, shape: str, *, runs: int = 3, one_core: bool = False) -> dict[str, object]:
    """Generate, read, grep, diagnose; return the figures."""
    path = workdir / f"bench-{size_mb}mb.log"
    truth = generate(str(path), size_mb, ranks, shape=shape)
    size = path.stat().st_size / 1e6
    plain = _plain_read(str(path))
    grep = _grep(str(path))
    before = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
    pin = ["taskset", "-c", "0"] if one_core and shutil.which("taskset") else []
    times: list[float] = []
    result: dict[str, object] = {}
    for _ in range(runs):  # the first run also fills DIAGNOSE_HOME's caches (compiled pattern databases)
        started = time.perf_counter()
        done = subprocess.run(
            [*pin, sys.executable, "-m", "diagnose", "log", str(path), "--json", "--no-retrieval"],
            capture_output=True,
            text=True,
            env={**os.environ, "DIAGNOSE_HOME": str(workdir / "home")},
        )
        times.append(time.perf_counter() - started)
        result = json.loads(done.stdout) if done.stdout else {}
    seconds = statistics.median(times)
    peak_kb = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
    root_cause = result.get("root_cause")
    return {
        "size_mb": round(size, 1),
        "shape": shape,
        "plain_read_mb_s": round(size / plain, 1),
        "grep_mb_s": round(size / grep, 1),
        "diagnose_mb_s": round(size / seconds, 1),
        "ratio_to_grep": round(grep / seconds, 3),
        "seconds": round(seconds, 2),
        "first_run_seconds": round(times[0], 2),
        "runs": runs,
        "cores": 1 if pin else os.cpu_count(),
        "peak_rss_mb": round(max(peak_kb, before) / 1024, 1),
        "root_cause": root_cause.get("id") if isinstance(root_cause, dict) else None,
        "initiating_rank": result.get("initiating_rank"),
        "expected_rank": truth["initiating_rank"],
        "exit": done.returncode,
    }


def main() -> None:
    """CLI entry point."""
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--sizes", type=int, nargs="+", default=[100])
    parser.add_argument("--ranks", type=int, default=512)
    parser.add_argument("--shape", choices=["mixed", "glog"], default="glog")
    parser.add_argument("--runs", type=int, default=3, help="diagnose runs per size; the median is reported")
    parser.add_argument("--one-core", action="store_true", help="pin diagnose to one core (it scans on a second one otherwise)")
    args = parser.parse_args()
    commit = subprocess.run(["git", "rev-parse", "--short", "HEAD"], capture_output=True, text=True, check=False).stdout.strip()
    print(f"# {datetime.date.today()} commit {commit}", flush=True)
    with tempfile.TemporaryDirectory() as tmp:
        for size in args.sizes:
            print(json.dumps(run(size, args.ranks, Path(tmp), args.shape, runs=args.runs, one_core=args.one_core)), flush=True)
            (Path(tmp) / f"bench-{size}mb.log").unlink()


if __name__ == "__main__":
    main()
