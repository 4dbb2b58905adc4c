"""``diagnose eval``: score the product on the labeled failure logs."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from diagnose.cli.errors import handle_errors
from diagnose.cli.llm import ContextOption, FastOption, LLMTimeoutOption, MaxTokensOption, model_settings
from diagnose.cli.output import console, err_console

if TYPE_CHECKING:
    from diagnose.settings import Settings


def register(app: typer.Typer) -> None:
    """Add the eval command."""

    @app.command("eval")
    @handle_errors
    def eval_command(
        cases: Annotated[
            Path | None,
            typer.Option(
                "--cases",
                help="Folder of cases (default: the bundled evals, by --split). With --chat: a folder of cases "
                "(their evals/chat questions) or of <case-id>.yaml question files.",
            ),
        ] = None,
        split: Annotated[
            str,
            typer.Option(
                "--split",
                help="Which bundled cases: synthetic (evals/cases), dev or test (evals/real), or all. "
                "With --chat: the question files of that split's cases (test is refused).",
            ),
        ] = "all",
        model: Annotated[str | None, typer.Option("--model", "-m", help="litellm model string (default: rules only).")] = None,
        api_base: Annotated[str | None, typer.Option("--api-base", help="Base URL of an OpenAI-compatible server.")] = None,
        json_: Annotated[bool, typer.Option("--json", help="Print the figures and per-case results as JSON.")] = False,
        report: Annotated[Path | None, typer.Option("--report", help="Also write a Markdown report here.")] = None,
        baseline: Annotated[Path | None, typer.Option("--baseline", help="A previous --json output to compare with.")] = None,
        retrieval: Annotated[
            bool | None, typer.Option("--retrieval/--no-retrieval", help="Use the vector index.", show_default=False)
        ] = None,
        llm_timeout: LLMTimeoutOption = None,
        max_tokens: MaxTokensOption = None,
        context: ContextOption = None,
        fast: FastOption = False,
        calibrate: Annotated[Path | None, typer.Option("--calibrate", help="Write the confidence table fitted on this run.")] = None,
        write_baseline: Annotated[
            Path | None, typer.Option("--write-baseline", help="Write the CI gate's baseline (per-split figures, per-case pass/fail).")
        ] = None,
        chat: Annotated[
            bool,
            typer.Option(
                "--chat", help="Score the follow-up chat on the evals/chat questions (of --split, --cases) instead of the diagnosis."
            ),
        ] = False,
    ) -> None:
        """Run every labeled case through the full product path (masking included) and score it."""
        from diagnose.bundled import evals_dir
        from diagnose.evaluation.cases import load_cases, load_split
        from diagnose.evaluation.run import markdown_report, run_suite
        from diagnose.evaluation.score import baseline_record, compare
        from diagnose.pipeline import open_backends

        settings = model_settings(model, api_base, retrieval, llm_timeout, max_tokens, context, fast)
        if chat:
            from diagnose.errors import ConfigError

            flags = (("--baseline", baseline), ("--calibrate", calibrate), ("--write-baseline", write_baseline))
            unused = [flag for flag, value in flags if value]
            if unused:
                raise ConfigError(f"{', '.join(unused)} score the diagnosis, not the chat: run them without --chat")
            _chat_eval(settings, json_, report, split=split, cases=cases)
            return
        suite = load_cases(cases) if cases else load_split(evals_dir(), split)
        llm, index = open_backends(settings)
        from rich.progress import Progress

        with Progress(console=err_console(), transient=True, disable=not sys.stderr.isatty()) as bar:
            task = bar.add_task("cases", total=len(suite))
            summary = run_suite(suite, settings, llm=llm, index=index, progress=lambda: bar.advance(task))
        if report:
            report.write_text(markdown_report(summary), encoding="utf-8")
        if calibrate:
            from diagnose.evaluation.calibrate import fit, held_out_samples

            samples = held_out_samples(suite, settings, index) if index is not None else None  # never the test split
            calibrate.write_text(json.dumps(fit(summary["results"], samples), indent=2) + "\n", encoding="utf-8")
        if write_baseline:
            write_baseline.write_text(json.dumps(baseline_record(summary), indent=1) + "\n", encoding="utf-8")
        if baseline:
            old = json.loads(baseline.read_text(encoding="utf-8"))
            for line in compare(summary, old):
                err_console().print(line, highlight=False, markup=False)
        if json_:
            typer.echo(json.dumps(summary, indent=2))
        else:
            console().print(markdown_report(summary), highlight=False, markup=False)


def _chat_eval(settings: Settings, json_: bool, report: Path | None, *, split: str, cases: Path | None) -> None:
    """``diagnose eval --chat``: ask the chosen evals/chat questions about their cases (offline, or the --model), score them."""
    from rich.progress import Progress

    from diagnose.bundled import evals_dir
    from diagnose.evaluation.chat_eval import run_chat_cases, select_chat_cases
    from diagnose.evaluation.chat_score import chat_markdown
    from diagnose.pipeline import open_llm

    chosen = select_chat_cases(evals_dir(), split=split, cases=cases)
    with Progress(console=err_console(), transient=True, disable=not sys.stderr.isatty()) as bar:
        task = bar.add_task("chat cases", total=len(chosen))
        summary = run_chat_cases(chosen, settings, llm=open_llm(settings), progress=lambda: bar.advance(task))
    if report:
        report.write_text(chat_markdown(summary), encoding="utf-8")
    if json_:
        typer.echo(json.dumps(summary, indent=2))
    else:
        console().print(chat_markdown(summary), highlight=False, markup=False)
