"""Consoles for the CLI: results on stdout, progress and warnings on stderr; colour only on a terminal."""

from __future__ import annotations

from rich.console import Console


def console() -> Console:
    """The stdout console (plain text when stdout is not a terminal)."""
    return Console(soft_wrap=True)


def err_console() -> Console:
    """The stderr console, for progress and notes."""
    return Console(stderr=True, soft_wrap=True)
