"""diagnose redact --stats: what was masked, and the random-looking values left for the user to judge."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path


def test_stats_list_values_left_unmasked_on_stderr_only(tmp_path: Path) -> None:
    log = tmp_path / "run.log"
    left = "Zq8vK2mNp4Rt7Yw1Xc5Bd9Lf3Hj6Gs0A"
    log.write_text(f"export KAGGLE_KEY=abc123\nrun id {left} started\nstep 1 loss 2.3\n", encoding="utf-8")
    done = subprocess.run(
        [sys.executable, "-m", "diagnose", "redact", "--stats", str(log)],
        capture_output=True,
        text=True,
        timeout=120,
        env={"DIAGNOSE_HOME": str(tmp_path / "home"), "PATH": "/usr/bin:/bin"},
    )
    assert done.returncode == 0, done.stderr
    assert "abc123" not in done.stdout + done.stderr
    assert "masked 1 value(s): TOKEN: 1" in done.stderr
    assert "line 2:" in done.stderr and left in done.stderr
    assert "random-looking" not in done.stdout
