"""``diagnose log`` and ``diagnose redact``: the main job, and what would leave the machine."""

from __future__ import annotations

import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from diagnose.cli.errors import handle_errors
from diagnose.cli.llm import ContextOption, FastOption, LLMTimeoutOption, MaxTokensOption, model_settings
from diagnose.cli.output import console, err_console, write_stdout
from diagnose.errors import InputError
from diagnose.parse.ingest import Source, read_chunks, resolve_sources

if TYPE_CHECKING:
    from diagnose.pipeline import Result

if TYPE_CHECKING:
    from redaction import Redactor

PathsArgument = Annotated[
    list[str],
    typer.Argument(
        help="Log files, directories of per-rank logs (Flight Recorder dumps beside them too), .gz files, "
        ".tar.gz/.zip archives of a run, or - for stdin.",
        show_default=False,
    ),
]
PROGRESS_MIN_BYTES = 50 << 20
SWEEP_LIMIT_CHARS = 64 << 20


def wants_progress(total_bytes: int, *, json_to_pipe: bool, forced: bool) -> bool:
    """A bar for inputs over PROGRESS_MIN_BYTES on a terminal; never for JSON going to a pipe, unless asked."""
    if forced:
        return True
    return sys.stderr.isatty() and not json_to_pipe and total_bytes >= PROGRESS_MIN_BYTES


@contextmanager
def _progress(sources: list[Source], *, json_to_pipe: bool, forced: bool) -> Iterator[Callable[[int], None] | None]:
    """A progress bar on stderr while reading (see ``wants_progress``); a no-op otherwise."""
    sources = [s for s in sources if s.kind == "log"]  # dumps and archives are not read as text: no progress to show
    sized = [s for s in sources if s.path is not None and s.path.suffix != ".gz"]
    total = sum(s.path.stat().st_size for s in sized if s.path is not None)
    if not wants_progress(total, json_to_pipe=json_to_pipe, forced=forced):
        yield None
        return
    from rich.console import Console
    from rich.progress import BarColumn, DownloadColumn, Progress, TransferSpeedColumn

    console = Console(stderr=True, force_terminal=True) if forced else err_console()
    with Progress("reading", BarColumn(), DownloadColumn(), TransferSpeedColumn(), console=console, transient=not forced) as bar:
        task = bar.add_task("read", total=total if len(sized) == len(sources) else None)
        yield lambda n: bar.advance(task, n)


def _write_timeline(target: Path, result: Result) -> None:
    """Write the timeline SVG for a multi-rank diagnosis; say on stderr when there is none to draw."""
    from diagnose.render.timeline_events import timeline_svg

    verdict = result.flight_recorder.verdict if result.flight_recorder else None
    svg = timeline_svg(result.diagnosis, result.log, verdict)
    if svg is None:
        err_console().print("no timeline: the diagnosis involves at most one rank", highlight=False)
        return
    try:
        target.write_text(svg, encoding="utf-8")
    except OSError as exc:
        raise InputError(f"cannot write the timeline: {exc.strerror or exc}") from exc
    err_console().print(f"timeline written to {target}", highlight=False)


def register(app: typer.Typer) -> None:
    """Add the log and redact commands to the app."""

    @app.command("log")
    @handle_errors
    def log_command(
        paths: PathsArgument,
        json_: Annotated[bool, typer.Option("--json", help="Print the JSON contract instead of the report.")] = False,
        progress_: Annotated[
            bool, typer.Option("--progress", help="Show the reading progress bar on stderr even for small inputs or JSON to a pipe.")
        ] = False,
        model: Annotated[
            str | None, typer.Option("--model", "-m", help="litellm model string (default: $DIAGNOSE_MODEL, else rules only).")
        ] = None,
        api_base: Annotated[str | None, typer.Option("--api-base", help="Base URL of an OpenAI-compatible server.")] = None,
        retrieval: Annotated[
            bool | None, typer.Option("--retrieval/--no-retrieval", help="Use the encyclopedia's vector index.", show_default=False)
        ] = None,
        llm_timeout: LLMTimeoutOption = None,
        max_tokens: MaxTokensOption = None,
        context: ContextOption = None,
        fast: FastOption = False,
        timeline: Annotated[
            Path | None,
            typer.Option(
                "--timeline",
                help="Write the failure timeline (SVG) here when more than one rank is involved.",
                dir_okay=False,
                writable=True,
            ),
        ] = None,
    ) -> None:
        """Diagnose why a training run died. Exit 0: diagnosed; 1: no known failure; 2: bad input.

        \b
        Examples:
          diagnose log train.log
          diagnose log logs/            # a directory of per-rank files
          kubectl logs job/train | diagnose log -
          diagnose log train.log.gz --json
          diagnose log fr_dumps/ --timeline hang.svg   # Flight Recorder dumps
          diagnose log run.tar.gz
        """
        from diagnose.pipeline import diagnose, open_backends

        settings = model_settings(model, api_base, retrieval, llm_timeout, max_tokens, context, fast)
        sources = resolve_sources(paths)
        llm, index = open_backends(settings)
        with _progress(sources, json_to_pipe=json_ and not sys.stdout.isatty(), forced=progress_) as progress:
            result = diagnose(sources, settings=settings, llm=llm, index=index, progress=progress)
        diagnosis = result.diagnosis
        if timeline is not None:
            _write_timeline(timeline, result)
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
        stats: Annotated[
            bool, typer.Option("--stats", help="Print counts of masked values by type, and random-looking values left, to stderr.")
        ] = False,
    ) -> None:
        """Print the log as diagnose sees it: every secret masked. Nothing else leaves the machine."""
        from redaction import Redactor

        redactor = Redactor()
        out = sys.stdout
        held: list[str] = []
        held_chars = 0
        for source in resolve_sources(paths):
            if source.kind != "log":  # Flight Recorder dumps and archives are not text (their strings are masked when read)
                err_console().print(f"skipped {source.name}: a Flight Recorder {source.kind}, not a text log", highlight=False)
                continue
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
            _print_stats(redactor)


def _print_stats(redactor: Redactor) -> None:
    """Counts of what was masked, then the values left that look random: the user judges them before sharing."""
    counts = redactor.counts
    summary = ", ".join(f"{kind}: {count}" for kind, count in sorted(counts.items())) or "nothing"
    err = err_console()
    err.print(f"masked {sum(counts.values())} value(s): {summary}", highlight=False, markup=False)
    unsure = redactor.unsure
    if not unsure:
        return
    err.print(f"left as they are, but random-looking ({redactor.unsure_total}): check before sharing", highlight=False, markup=False)
    for item in unsure:  # shown on the user's own terminal only; never stored or sent anywhere
        where = f"line {item.line_no}" if item.line_no is not None else "line ?"
        err.print(f"  {where}: {item.snippet}", highlight=False, markup=False)
    if redactor.unsure_total > len(unsure):
        err.print(f"  ... and {redactor.unsure_total - len(unsure)} more", highlight=False, markup=False)
