"""``python -m diagnose``."""

from diagnose.cli import app

app(prog_name="diagnose")
