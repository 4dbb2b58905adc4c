"""The reading progress bar: on a terminal for large inputs, never for JSON to a pipe unless --progress."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from diagnose.cli import log as log_cli
from diagnose.cli.log import PROGRESS_MIN_BYTES, wants_progress

EXAMPLE = Path(__file__).resolve().parents[1] / "examples" / "multi-rank-oom.log"


@pytest.mark.parametrize(
    ("tty", "size", "json_to_pipe", "forced", "shown"),
    [
        (True, PROGRESS_MIN_BYTES, False, False, True),
        (True, PROGRESS_MIN_BYTES - 1, False, False, False),
        (False, PROGRESS_MIN_BYTES * 4, False, False, False),
        (True, PROGRESS_MIN_BYTES * 4, True, False, False),
        (False, 10, True, True, True),
    ],
)
def test_when_the_bar_shows(monkeypatch: pytest.MonkeyPatch, tty: bool, size: int, json_to_pipe: bool, forced: bool, shown: bool) -> None:
    monkeypatch.setattr(log_cli.sys.stderr, "isatty", lambda: tty)
    assert wants_progress(size, json_to_pipe=json_to_pipe, forced=forced) is shown


def test_forced_progress_writes_to_stderr_only(tmp_path: Path) -> None:
    done = subprocess.run(
        [sys.executable, "-m", "diagnose", "log", "--json", "--progress", "--no-retrieval", str(EXAMPLE)],
        capture_output=True,
        text=True,
        timeout=120,
        env={"DIAGNOSE_HOME": str(tmp_path), "PATH": "/usr/bin:/bin"},
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.lstrip().startswith("{")
    assert "reading" in done.stderr
