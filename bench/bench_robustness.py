"""The eval suite as users paste it: the same logs hard-wrapped, timestamped by kubectl, with CRLF or ANSI colours.

    python bench/bench_robustness.py                  # every perturbation, synthetic + dev cases
    python bench/bench_robustness.py --only wrap80 kubectl-timestamps

Each perturbation rewrites every ``synthetic`` and ``dev`` case's log into a temporary folder (``test`` cases are
never read) and runs ``diagnose eval --cases`` on it, beside the unperturbed copy. It prints top-1 per perturbation
and initiating-rank accuracy (proven ranks) per perturbation, and the cases whose answer or rank changed. No assert:
figures only.

The shapes are ``diagnose.evaluation.pasted_shapes``: a terminal's hard wrap at 80 / 120 columns, colour codes,
Windows line ends, ``kubectl logs --prefix`` / ``--timestamps``, GitHub Actions' and the CRI log file's times.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

import yaml

from diagnose.evaluation.pasted_shapes import SHIPPERS, TERMINALS, TIMESTAMPING, Shape

ROOT = Path(__file__).resolve().parent.parent


PERTURBATIONS: dict[str, Shape] = {"none": lambda text: text, **TERMINALS, **SHIPPERS, **TIMESTAMPING}


def cases() -> list[Path]:
    """The synthetic cases and the real dev cases (never a test case)."""
    real = [d for d in sorted((ROOT / "evals" / "real").iterdir()) if yaml.safe_load((d / "label.yaml").read_text())["split"] == "dev"]
    return sorted((ROOT / "evals" / "cases").iterdir()) + real


def perturb(cases: list[Path], change: Shape, out: Path) -> None:
    """Copy each case's label, and its log files changed, into ``out``."""
    for case in cases:
        target = out / case.name
        target.mkdir(parents=True)
        (target / "label.yaml").write_bytes((case / "label.yaml").read_bytes())
        for path in case.rglob("*"):
            if path.is_file() and path.name != "label.yaml":
                dest = target / path.relative_to(case)
                dest.parent.mkdir(parents=True, exist_ok=True)
                dest.write_text(change(path.read_text(encoding="utf-8", errors="replace")), encoding="utf-8", newline="")


def run(folder: Path, home: Path) -> dict[str, tuple[bool, bool | None]]:
    """Each case's top-1 right or wrong and its proven rank right, wrong or not counted, from ``diagnose eval --json``."""
    done = subprocess.run(
        [sys.executable, "-m", "diagnose", "eval", "--cases", str(folder), "--json"],
        capture_output=True,
        text=True,
        check=True,
        env={**os.environ, "DIAGNOSE_HOME": str(home)},
    )
    return {row["id"]: (row["correct"], row["rank_correct"]) for row in json.loads(done.stdout)["results"]}


def main() -> None:
    """Print top-1 per perturbation and the cases each one changed."""
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--only", nargs="*", choices=[p for p in PERTURBATIONS if p != "none"], help="perturbations to run")
    args = parser.parse_args()
    chosen = ["none", *(args.only or [p for p in PERTURBATIONS if p != "none"])]
    selected = cases()
    commit = subprocess.run(["git", "rev-parse", "--short", "HEAD"], capture_output=True, text=True, cwd=ROOT).stdout.strip()
    print(f"commit {commit}: {len(selected)} cases (synthetic and dev)")
    with tempfile.TemporaryDirectory() as tmp:
        base: dict[str, tuple[bool, bool | None]] = {}
        for name in chosen:
            folder = Path(tmp) / name
            perturb(selected, PERTURBATIONS[name], folder)
            results = run(folder, Path(tmp) / "home")
            base = base or results
            top1 = sum(right for right, _ in results.values()) / len(results)
            ranks = [rank for _, rank in results.values() if rank is not None]
            changed = sorted(case for case, result in results.items() if result != base.get(case))
            print(
                f"{name:18} top-1 {top1:.3f}  rank {sum(ranks) / max(1, len(ranks)):.3f} ({len(ranks)})"
                f"  changed: {', '.join(changed) or 'none'}"
            )


if __name__ == "__main__":
    main()
