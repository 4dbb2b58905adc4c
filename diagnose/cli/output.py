"""Consoles for the CLI: results on stdout, progress and warnings on stderr; colour only on a terminal.

When the reader of stdout goes away (``diagnose log x | head``), the rest of the output is dropped
and the command still ends with its own exit code: rich would exit with 1, which here means
"no failure found".
"""

from __future__ import annotations

import os
import sys

from rich.console import Console


def _silence_stdout() -> None:
    devnull = os.open(os.devnull, os.O_WRONLY)
    os.dup2(devnull, sys.stdout.fileno())


class _StdoutConsole(Console):
    def on_broken_pipe(self) -> None:
        """Drop the rest of the report instead of exiting."""
        self.quiet = True
        _silence_stdout()


def console() -> Console:
    """The stdout console (plain text when stdout is not a terminal)."""
    return _StdoutConsole(soft_wrap=True)


def err_console() -> Console:
    """The stderr console, for progress and notes."""
    return Console(stderr=True, soft_wrap=True)


def write_stdout(text: str) -> None:
    """Print a result (JSON, masked text); a closed pipe drops the rest without failing the command."""
    try:
        sys.stdout.write(text)
        sys.stdout.flush()
    except BrokenPipeError:
        _silence_stdout()
