"""``diagnose cache``: the model-answer cache in the user directory (grounded answers only, masked text only)."""

from __future__ import annotations

import typer

from diagnose.cli.errors import handle_errors
from diagnose.cli.output import console

app = typer.Typer(no_args_is_help=True, help="The cache of grounded model answers.")


@app.command("clear")
@handle_errors
def clear() -> None:
    """Remove every cached model answer (the next run asks the model again)."""
    from diagnose.llm.cache import cache_dir
    from diagnose.llm.cache import clear as clear_cache

    removed = clear_cache()
    console().print(f"removed {removed} cached model answer(s) from {cache_dir()}", highlight=False, markup=False)
