"""``diagnose log`` and ``diagnose redact``: the main job, and what would leave the machine."""

from __future__ import annotations

import sys
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Annotated

import typer

from diagnose.cli.errors import handle_errors
from diagnose.cli.output import console, err_console, write_stdout
from diagnose.parse.ingest import Source, read_chunks, resolve_sources

PathsArgument = Annotated[
    list[str], typer.Argument(help="Log files, directories of per-rank logs, .gz files, or - for stdin.", show_default=False)
]
PROGRESS_MIN_BYTES = 50 << 20
SWEEP_LIMIT_CHARS = 64 << 20


@contextmanager
def _progress(sources: list[Source]) -> Iterator[object]:
    """A progress bar on stderr for large inputs on a terminal; a no-op otherwise."""
    total = sum(s.path.stat().st_size for s in sources if s.path is not None and s.path.suffix != ".gz")
    if not sys.stderr.isatty() or total < PROGRESS_MIN_BYTES:
        yield None
        return
    from rich.progress import BarColumn, DownloadColumn, Progress, TransferSpeedColumn

    with Progress("reading", BarColumn(), DownloadColumn(), TransferSpeedColumn(), console=err_console(),
                  transient=True) as bar:
        task = bar.add_task("read", total=total)
        yield lambda n: bar.advance(task, n)


def register(app: typer.Typer) -> None:
    """Add the log and redact commands to the app."""

    @app.command("log")
    @handle_errors
    def log_command(
        paths: PathsArgument,
        json_: Annotated[bool, typer.Option("--json", help="Print the JSON contract instead of the report.")] = False,
        model: Annotated[
            str | None, typer.Option("--model", "-m", help="litellm model string (default: $DIAGNOSE_MODEL, else rules only).")
        ] = None,
        api_base: Annotated[str | None, typer.Option("--api-base", help="Base URL of an OpenAI-compatible server.")] = None,
        retrieval: Annotated[
            bool | None, typer.Option("--retrieval/--no-retrieval", help="Use the encyclopedia's vector index.", show_default=False)
        ] = None,
    ) -> None:
        """Diagnose why a training run died. Exit 0: diagnosed; 1: no known failure; 2: bad input.

        \b
        Examples:
          diagnose log train.log
          diagnose log logs/            # a directory of per-rank files
          kubectl logs job/train | diagnose log -
          diagnose log train.log.gz --json
        """
        from diagnose.pipeline import diagnose, open_backends
        from diagnose.settings import load_settings

        settings = load_settings(model=model, api_base=api_base, retrieval=retrieval)
        sources = resolve_sources(paths)
        llm, index = open_backends(settings)
        with _progress(sources) as progress:
            result = diagnose(sources, settings=settings, llm=llm, index=index, progress=progress)  # type: ignore[arg-type]
        diagnosis = result.diagnosis
        if json_:
            write_stdout(diagnosis.model_dump_json(indent=2) + "\n")
        else:
            from diagnose.render.report import print_report

            print_report(diagnosis, console())
        raise typer.Exit(1 if diagnosis.is_unknown else 0)

    @app.command("redact")
    @handle_errors
    def redact_command(
        paths: PathsArgument,
        stats: Annotated[bool, typer.Option("--stats", help="Print counts of masked values by type to stderr.")] = False,
    ) -> None:
        """Print the log as diagnose sees it: every secret masked. Nothing else leaves the machine."""
        from redaction import Redactor

        redactor = Redactor()
        out = sys.stdout
        held: list[str] = []
        held_chars = 0
        for source in resolve_sources(paths):
            for chunk in read_chunks(source):
                held.append(redactor.redact_text(chunk.text))
                held_chars += len(held[-1])
                if held_chars > SWEEP_LIMIT_CHARS:  # too big to hold: stream from here on
                    out.writelines(text + "\n" for text in held)
                    held, held_chars = [], 0
        # values recognised late in the log (a user name on line 900) are masked in earlier lines too
        out.writelines(redactor.sweep_known(text) + "\n" for text in held)
        out.flush()
        if stats:
            counts = redactor.counts
            summary = ", ".join(f"{kind}: {count}" for kind, count in sorted(counts.items())) or "nothing"
            err_console().print(f"masked {sum(counts.values())} value(s): {summary}", highlight=False)
