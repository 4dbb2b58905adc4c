"""The ``diagnose`` command line: typer wiring only; each command group lives in its own module."""

from __future__ import annotations

import typer

from diagnose.cli import cache as cache_commands
from diagnose.cli import chat as chat_commands
from diagnose.cli import eval as eval_commands
from diagnose.cli import kb as kb_commands
from diagnose.cli import llm as llm_commands
from diagnose.cli import log as log_commands
from diagnose.cli import serve as serve_commands

app = typer.Typer(
    no_args_is_help=True,
    pretty_exceptions_show_locals=False,
    add_completion=False,
    help="Tell why a distributed PyTorch training run died, offline, from its logs.",
    context_settings={"help_option_names": ["-h", "--help"]},
)
log_commands.register(app)
chat_commands.register(app)
eval_commands.register(app)
serve_commands.register(app)
app.add_typer(kb_commands.app, name="kb")
app.add_typer(llm_commands.app, name="llm")
app.add_typer(cache_commands.app, name="cache")
