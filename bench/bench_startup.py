"""Cold start: ``diagnose log`` on a 10-line log, run N times as a fresh process, next to ``python -c pass`` and grep.

    python bench/bench_startup.py --runs 10

Prints min and median wall time of each command and the ratios, with the date and commit, since
these machines are noisy. The first run warms the caches under DIAGNOSE_HOME (compiled pattern
databases, the index when built); the figures are for the runs after it, as a user sees them from
the second run on.
"""

from __future__ import annotations

import argparse
import datetime
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

LOG = (
    "[rank0]:[I1202 10:00:00.000001 train.py:10] step 1 loss 2.31\n"
    "[rank1]:[I1202 10:00:00.000002 train.py:10] step 1 loss 2.30\n"
    "[rank0]:[I1202 10:00:01.000001 train.py:10] step 2 loss 2.29\n"
    "[rank1]:[I1202 10:00:01.000002 train.py:10] step 2 loss 2.28\n"
    "[rank1]: Traceback (most recent call last):\n"
    '[rank1]:   File "train.py", line 42, in <module>\n'
    "[rank1]:     loss.backward()\n"
    "[rank1]: torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB. GPU 1 has a total capacity of"
    " 79.15 GiB of which 1.06 GiB is free.\n"
    "[rank0]:[E1202 10:10:01.000001 ProcessGroupNCCL.cpp:616] [Rank 0] Watchdog caught collective operation timeout"
    ": WorkNCCL(SeqNum=52, OpType=ALLREDUCE, NumelIn=1, NumelOut=1, Timeout(ms)=600000) ran for 600003 milliseconds"
    " before timing out.\n"
    "E1202 10:10:02.000000 1234 torch/distributed/elastic/multiprocessing/api.py:869] failed (exitcode: 1) local_ra"
    "nk: 1 (pid: 4242) of binary: python\n"
)


def _times(argv: list[str], runs: int, env: dict[str, str]) -> list[float]:
    subprocess.run(argv, env=env, capture_output=True, check=False)  # warm-up: caches, page cache
    out = []
    for _ in range(runs):
        started = time.perf_counter()
        subprocess.run(argv, env=env, capture_output=True, check=False)
        out.append(time.perf_counter() - started)
    return out


def _commit() -> str:
    done = subprocess.run(["git", "rev-parse", "--short", "HEAD"], capture_output=True, text=True, check=False)
    return done.stdout.strip() or "unknown"


def main() -> None:
    """Run the three commands and print the table."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=10)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        log = Path(tmp) / "small.log"
        log.write_text(LOG, encoding="utf-8")
        env = {**os.environ, "DIAGNOSE_HOME": str(Path(tmp) / "home")}
        commands = {
            "python -c pass": [sys.executable, "-c", "pass"],
            "grep -cE": ["grep", "-cE", "out of memory|Watchdog", str(log)],
            "diagnose log": [sys.executable, "-m", "diagnose", "log", str(log)],
            "diagnose log --json": [sys.executable, "-m", "diagnose", "log", "--json", str(log)],
        }
        results = {name: _times(argv, args.runs, env) for name, argv in commands.items()}
    base = statistics.median(results["python -c pass"])
    print(f"cold start, {args.runs} fresh processes each, {datetime.date.today()} commit {_commit()}")
    print(f"{'command':<22} {'min s':>7} {'median s':>9} {'x python':>9}")
    for name, times in results.items():
        median = statistics.median(times)
        print(f"{name:<22} {min(times):>7.3f} {median:>9.3f} {median / base:>9.1f}")


if __name__ == "__main__":
    main()
