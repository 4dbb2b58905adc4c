"""End-to-end throughput and memory of ``diagnose log --json`` on generated multi-rank logs.

    python bench/bench_diagnose.py --sizes 200 1000 --shape glog --ranks 64

For each size: generates the log (bench/generate_log.py; ``glog`` is the shape users' torchrun logs
have: ``[rankN]:[I1202 hh:mm:ss.us file:line] step ... loss ...``, one OOM buried late), times plain
reading and ``grep -cE`` over the same file in the same run, then runs ``diagnose log --json`` in a
subprocess (start-up included, one core) and reports MB/s, the ratio to grep, peak RSS and whether
the planted root cause and rank were found. Targets: >= 100 MB/s and >= 0.15 of grep at 200 MB;
peak RSS <= 300 MB at 1 GB.
"""

from __future__ import annotations

import argparse
import datetime
import json
import os
import resource
import shutil
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


def run(size_mb: int, ranks: int, workdir: Path, shape: str) -> dict[str, object]:
    """Generate, read, grep, diagnose; return the figures."""
    path = workdir / f"bench-{size_mb}mb.log"
    truth = generate(str(path), size_mb, ranks, shape=shape)
    size = path.stat().st_size / 1e6
    plain = _plain_read(str(path))
    grep = _grep(str(path))
    before = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
    started = time.perf_counter()
    pin = ["taskset", "-c", "0"] if shutil.which("taskset") else []
    done = subprocess.run(
        [*pin, sys.executable, "-m", "diagnose", "log", str(path), "--json", "--no-retrieval"],
        capture_output=True,
        text=True,
        env={**os.environ, "DIAGNOSE_HOME": str(workdir / "home")},
    )
    seconds = time.perf_counter() - started
    peak_kb = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
    result = json.loads(done.stdout) if done.stdout else {}
    return {
        "size_mb": round(size, 1),
        "shape": shape,
        "plain_read_mb_s": round(size / plain, 1),
        "grep_mb_s": round(size / grep, 1),
        "diagnose_mb_s": round(size / seconds, 1),
        "ratio_to_grep": round(grep / seconds, 3),
        "seconds": round(seconds, 2),
        "peak_rss_mb": round(max(peak_kb, before) / 1024, 1),
        "root_cause": result.get("root_cause", {}).get("id"),
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
    args = parser.parse_args()
    commit = subprocess.run(["git", "rev-parse", "--short", "HEAD"], capture_output=True, text=True, check=False).stdout.strip()
    print(f"# {datetime.date.today()} commit {commit}", flush=True)
    with tempfile.TemporaryDirectory() as tmp:
        for size in args.sizes:
            print(json.dumps(run(size, args.ranks, Path(tmp), args.shape)), flush=True)
            (Path(tmp) / f"bench-{size}mb.log").unlink()


if __name__ == "__main__":
    main()
