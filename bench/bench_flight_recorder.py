"""Time the Flight Recorder path (read + mask + analyze + timeline) on the shared runs and on synthetic scale.

    python bench/bench_flight_recorder.py                       # the two shared runs
    python bench/bench_flight_recorder.py --ranks 512 --entries 2000 --png /tmp/timeline64.png

For each shared run (../shared/flight-recorder/<run>): a cold subprocess (interpreter start, imports, the
Redactor's engine build, reading 16 dumps, analysis) and, in this process, each stage separately; prints
the ranks, group and collective named. Target: the cold run under 2 s and exactly ranks 9 and 14.
``--ranks``/``--entries`` add a synthetic hang (the last rank never joins) of that many JSON dumps.
``--png`` renders the 64-rank demo timeline with headless chromium when /usr/bin/chromium exists.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from diagnose.engine.flight_recorder import analyze  # noqa: E402
from diagnose.parse.flight_recorder import load_dumps  # noqa: E402
from diagnose.render.timeline import Kind, TimelineEvent, render_timeline, timeline_from_verdict  # noqa: E402
from redaction import Redactor  # noqa: E402

COLD = """
import sys, time, json
t = time.perf_counter()
from redaction import Redactor
from diagnose.parse.flight_recorder import load_dumps
from diagnose.engine.flight_recorder import analyze
v = analyze(load_dumps(sys.argv[1], Redactor()))
print(json.dumps({"ranks": v.initiating_ranks, "seconds": time.perf_counter() - t}))
"""


def _shared() -> Path:
    return Path(os.environ.get("DIAGNOSE_SHARED_DIR", REPO.parent / "shared")) / "flight-recorder"


def bench_run(folder: Path) -> dict[str, object]:
    """Cold subprocess wall time, then in-process stage times and what was named."""
    started = time.perf_counter()
    done = subprocess.run([sys.executable, "-c", COLD, str(folder)], capture_output=True, text=True, cwd=REPO, check=True)
    cold = time.perf_counter() - started
    t0 = time.perf_counter()
    redactor = Redactor()
    t1 = time.perf_counter()
    dumps = load_dumps(folder, redactor)
    t2 = time.perf_counter()
    verdict = analyze(dumps)
    t3 = time.perf_counter()
    render_timeline(timeline_from_verdict(verdict), initiating_ranks=verdict.initiating_ranks)
    t4 = time.perf_counter()
    pg, coll = verdict.process_group, verdict.collective
    return {
        "run": folder.name,
        "cold_process_s": round(cold, 3),
        "cold_inside_s": json.loads(done.stdout)["seconds"],
        "redactor_build_s": round(t1 - t0, 3),
        "load_s": round(t2 - t1, 4),
        "analyze_s": round(t3 - t2, 4),
        "timeline_s": round(t4 - t3, 4),
        "kind": verdict.kind,
        "initiating_ranks": verdict.initiating_ranks,
        "process_group": f"{pg.name} {pg.desc} {pg.ranks}" if pg else None,
        "collective": f"{coll.op} #{coll.seq_id} ({coll.seq_kind})" if coll else None,
        "groups_supporting": [f"{f.process_group.desc}({f.process_group.name}) -> {f.initiating_ranks}" for f in verdict.findings],
    }


def bench_synthetic(ranks: int, entries: int, workdir: Path) -> dict[str, object]:
    """``ranks`` JSON dumps of ``entries`` completed all_reduces each, then one the last rank never joins."""
    group = {"0": {"name": "0", "desc": "default_pg", "ranks": str(list(range(ranks)))}}
    for rank in range(ranks):
        last = entries if rank == ranks - 1 else entries + 1
        rows = [
            {"record_id": i, "pg_id": 0, "process_group": ["0", "default_pg"], "collective_seq_id": i, "p2p_seq_id": 0, "op_id": i}
            | {"profiling_name": "nccl:all_reduce", "time_created_ns": i, "input_sizes": [[1024]], "input_dtypes": ["Float"]}
            | {"output_sizes": [[1024]], "output_dtypes": ["Float"], "is_p2p": False, "timeout_ms": 600000}
            | {
                "state": "completed" if i <= entries else "scheduled",
                "frames": [{"name": "step", "filename": "/workspace/t.py", "line": 1}],
            }
            for i in range(max(1, last - entries + 1), last + 1)
        ]
        status = {"0": {"last_enqueued_collective": last, "last_started_collective": -1, "last_completed_collective": entries}}
        body = {"version": "2.9", "pg_config": group, "pg_status": status, "entries": rows}
        (workdir / f"_dump_{rank}").write_text(json.dumps(body))
    redactor = Redactor()
    t0 = time.perf_counter()
    dumps = load_dumps(workdir, redactor)
    t1 = time.perf_counter()
    verdict = analyze(dumps)
    t2 = time.perf_counter()
    return {"ranks": ranks, "entries_per_rank": len(dumps[0].entries), "load_s": round(t1 - t0, 3), "analyze_s": round(t2 - t1, 3)} | {
        "initiating_ranks": verdict.initiating_ranks
    }


def demo_png(path: Path) -> str:
    """Render the 64-rank demo timeline to PNG with headless chromium, if present."""
    chromium = shutil.which("chromium") or ("/usr/bin/chromium" if Path("/usr/bin/chromium").exists() else None)
    if chromium is None:
        return "skipped: no chromium"
    events = []
    for rank in range(64):
        kind: Kind = "initiating" if rank in (9, 14) else "cascade"
        label = f"[rank{rank}] " + (
            "CUDA error: an illegal memory access" if kind == "initiating" else "Watchdog caught collective timeout"
        )
        events.append(TimelineEvent(rank, 100.0 if kind == "initiating" else 700.0 + rank / 50, 2 * rank, kind, label))
        events.append(TimelineEvent(rank, 706.0, 2 * rank + 1, "teardown", "closing signal SIGTERM"))
    svg = render_timeline(events, initiating_ranks=[9, 14], first_observed_rank=0, title="Failure timeline, 64 ranks")
    with tempfile.TemporaryDirectory() as tmp:
        src = Path(tmp) / "timeline.svg"
        src.write_text(svg)
        cmd = [chromium, "--headless", "--no-sandbox", "--disable-gpu", f"--screenshot={path}", "--window-size=1000,260", src.as_uri()]
        subprocess.run(cmd, capture_output=True, timeout=60, check=False)
    return str(path) if path.exists() else "failed"


def main() -> None:
    """Parse arguments, run the benchmarks, print one JSON line per figure set."""
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--ranks", type=int, default=0, help="also time a synthetic hang of this many ranks")
    parser.add_argument("--entries", type=int, default=2000, help="entries per synthetic dump")
    parser.add_argument("--png", type=Path, default=None, help="write the 64-rank demo timeline as PNG here")
    args = parser.parse_args()
    shared = _shared()
    for run in ("gpu_error_2nd", "lock_gil_1st"):
        if (shared / run).is_dir():
            print(json.dumps(bench_run(shared / run)))
        else:
            print(json.dumps({"run": run, "skipped": f"{shared / run} is absent"}))
    if args.ranks:
        with tempfile.TemporaryDirectory() as tmp:
            print(json.dumps(bench_synthetic(args.ranks, args.entries, Path(tmp))))
    if args.png:
        print(json.dumps({"png": demo_png(args.png)}))


if __name__ == "__main__":
    main()
