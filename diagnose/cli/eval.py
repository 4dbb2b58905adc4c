"""``diagnose eval``: score the product on the labeled failure logs."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Annotated

import typer

from diagnose.cli.errors import handle_errors
from diagnose.cli.output import console, err_console


def register(app: typer.Typer) -> None:
    """Add the eval command."""

    @app.command("eval")
    @handle_errors
    def eval_command(
        cases: Annotated[Path | None, typer.Option("--cases", help="Folder of cases (default: the bundled evals/cases).")] = None,
        model: Annotated[str | None, typer.Option("--model", "-m", help="litellm model string (default: rules only).")] = None,
        api_base: Annotated[str | None, typer.Option("--api-base", help="Base URL of an OpenAI-compatible server.")] = None,
        json_: Annotated[bool, typer.Option("--json", help="Print the figures and per-case results as JSON.")] = False,
        report: Annotated[Path | None, typer.Option("--report", help="Also write a Markdown report here.")] = None,
        baseline: Annotated[Path | None, typer.Option("--baseline", help="A previous --json output to compare with.")] = None,
        retrieval: Annotated[
            bool | None, typer.Option("--retrieval/--no-retrieval", help="Use the vector index.", show_default=False)
        ] = None,
        calibrate: Annotated[Path | None, typer.Option("--calibrate", help="Write the confidence table fitted on this run.")] = None,
    ) -> None:
        """Run every labeled case through the full product path (masking included) and score it."""
        from diagnose.bundled import evals_dir
        from diagnose.evaluation.cases import load_cases
        from diagnose.evaluation.run import markdown_report, run_suite
        from diagnose.evaluation.score import compare
        from diagnose.pipeline import open_backends
        from diagnose.settings import load_settings

        settings = load_settings(model=model, api_base=api_base, retrieval=retrieval)
        suite = load_cases(cases or evals_dir() / "cases")
        llm, index = open_backends(settings)
        from rich.progress import Progress

        with Progress(console=err_console(), transient=True, disable=not sys.stderr.isatty()) as bar:
            task = bar.add_task("cases", total=len(suite))
            summary = run_suite(suite, settings, llm=llm, index=index, progress=lambda: bar.advance(task))
        if report:
            report.write_text(markdown_report(summary), encoding="utf-8")
        if calibrate:
            from diagnose.evaluation.calibrate import fit

            calibrate.write_text(json.dumps(fit(summary["results"]), indent=2) + "\n", encoding="utf-8")
        if baseline:
            old = json.loads(baseline.read_text(encoding="utf-8"))
            for line in compare(summary, old):
                err_console().print(line, highlight=False, markup=False)
        if json_:
            typer.echo(json.dumps(summary, indent=2))
        else:
            console().print(markdown_report(summary), highlight=False, markup=False)
