"""One translation of DiagnoseError into a one-line message and an exit code, for every command."""

from __future__ import annotations

import functools
import sys
from collections.abc import Callable
from typing import ParamSpec, TypeVar

import click
import typer

from diagnose.errors import DiagnoseError
from diagnose.settings import load_settings

INTERNAL_ERROR = 3
P = ParamSpec("P")
T = TypeVar("T")


def handle_errors(func: Callable[P, T]) -> Callable[P, T]:
    """Run a command; a DiagnoseError becomes ``error: ...`` on stderr and its exit code, never a traceback."""

    @functools.wraps(func)
    def wrapper(*args: P.args, **kwargs: P.kwargs) -> T:
        try:
            return func(*args, **kwargs)
        except DiagnoseError as exc:
            print(f"error: {exc}", file=sys.stderr)
            raise typer.Exit(exc.exit_code) from None
        except KeyboardInterrupt:
            print("interrupted", file=sys.stderr)
            raise typer.Exit(130) from None
        except BrokenPipeError:
            sys.stderr.close()
            raise typer.Exit(0) from None
        except (typer.Exit, typer.Abort, click.exceptions.ClickException):
            raise
        except Exception as exc:  # a bug: one line for the user, the traceback only on request
            if _debug():
                raise
            print(f"error: internal error ({type(exc).__name__}: {exc}); rerun with DIAGNOSE_DEBUG=1 and report it", file=sys.stderr)
            raise typer.Exit(INTERNAL_ERROR) from None

    return wrapper


def _debug() -> bool:
    """The ``debug`` setting; off when the settings themselves cannot be read."""
    try:
        return load_settings().debug
    except DiagnoseError:
        return False
