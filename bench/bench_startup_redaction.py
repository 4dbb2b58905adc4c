"""Measure redaction start-up: a fresh process that masks one line, cold (first run) and warm.

"Warm" is the second and later runs, when the compiled prefilter is in the cache
(``$DIAGNOSE_HOME/cache``). Each run is a new interpreter, as ``diagnose log`` is:

    python -c "from redaction import Redactor; Redactor().redact_text('x')"

    python bench/bench_startup_redaction.py --runs 5
    python bench/bench_startup_redaction.py --importtime   # where the import time goes
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
CODE = "from redaction import Redactor; Redactor().redact_text('x')"
PHASES = """
import time
t0 = time.perf_counter()
import redaction.framework
t1 = time.perf_counter()
from redaction.recognizers import all_recognizers
recognizers = all_recognizers()
t2 = time.perf_counter()
from redaction.engine import shared_engine as _engine
_engine(True)
t3 = time.perf_counter()
print(f"{t1 - t0:.3f} {t2 - t1:.3f} {t3 - t2:.3f}")
"""


def run(code: str, env: dict[str, str]) -> tuple[float, str]:
    """Run ``code`` in a new interpreter; return wall seconds and its stdout."""
    start = time.perf_counter()
    out = subprocess.run([sys.executable, "-c", code], cwd=REPO, env=env, capture_output=True, text=True, check=True)
    return time.perf_counter() - start, out.stdout


def main() -> None:
    """Print cold and warm start-up times and a breakdown of the warm one."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=5, help="warm runs to take the median of")
    parser.add_argument("--importtime", action="store_true", help="also print the 12 slowest imports (python -X importtime)")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="bench-startup-") as home:
        env = {**os.environ, "DIAGNOSE_HOME": home}
        cold, _ = run(CODE, env)
        warm = [run(CODE, env)[0] for _ in range(args.runs)]
        phases = [run(PHASES, env)[1].split() for _ in range(args.runs)]
        bare, _ = run("pass", env)
        print(f"python -c 'pass':                 {bare:.2f} s")
        print(f"cold (empty cache, first run):    {cold:.2f} s")
        print(f"warm (median of {args.runs}):             {statistics.median(warm):.2f} s  (min {min(warm):.2f})")
        names = ("import presidio (framework)", "build recognizers", "load prefilter + engine")
        for i, name in enumerate(names):
            print(f"  {name:<30} {statistics.median(float(p[i]) for p in phases):.3f} s")
        if args.importtime:
            result = subprocess.run([sys.executable, "-X", "importtime", "-c", CODE], cwd=REPO, env=env, capture_output=True, text=True)
            rows = [line.split("|") for line in result.stderr.splitlines() if line.startswith("import time:") and "|" in line]
            rows = [(int(r[1]), r[2].rstrip()) for r in rows if r[1].strip().isdigit()]
            for cumulative, name in sorted(rows, reverse=True)[:12]:
                print(f"  {cumulative / 1e6:6.3f} s {name}")


if __name__ == "__main__":
    main()
