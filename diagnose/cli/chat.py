"""``diagnose chat``: the diagnosis, then follow-up questions in the terminal."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Annotated, TextIO

import typer

from diagnose.cli.errors import handle_errors
from diagnose.cli.llm import ContextOption, FastOption, LLMTimeoutOption, MaxTokensOption, model_settings
from diagnose.cli.output import console

COMMANDS = {"/evidence": "show the evidence", "/fix": "how do I fix it", "/verify": "how do I verify the fix"}
HELP = "Ask a question, or /evidence, /fix, /verify, /quit."


def _start_history() -> bool:
    """Keep a readline history of masked questions only, in the user dir, when readline exists.

    Readline's automatic history (raw input) is off: ``_remember`` adds each question as masked.
    A history file written raw by an older version is masked now, with a fresh redactor, and
    rewritten; the file is written again on exit, readable by the user only.
    """
    try:
        import readline
    except ImportError:
        return False
    import atexit

    from diagnose.settings import user_dir
    from redaction import Redactor

    path = user_dir() / "chat_history"
    path.parent.mkdir(parents=True, exist_ok=True)
    readline.set_auto_history(False)
    readline.set_history_length(1000)
    if path.exists():
        readline.read_history_file(path)
        kept = [readline.get_history_item(i) for i in range(1, readline.get_current_history_length() + 1)]
        masker = Redactor()
        readline.clear_history()
        for item in kept:
            if item:
                readline.add_history(masker.redact_line(item))
        _write_history(path)
    atexit.register(_write_history, path)
    return True


def _write_history(path: Path) -> None:
    """Write readline's history (masked questions only) to ``path``, readable by the user only."""
    import readline

    readline.write_history_file(path)
    path.chmod(0o600)


def _remember(masked: str) -> None:
    """Add a masked question to readline's history (never the raw input)."""
    import readline

    readline.add_history(masked)


def _terminal() -> TextIO | None:
    """The controlling terminal for reading questions, when there is one."""
    try:
        return open("/dev/tty", encoding="utf-8")
    except OSError:
        return None


def register(app: typer.Typer) -> None:
    """Add the chat command."""

    @app.command("chat")
    @handle_errors
    def chat_command(
        paths: Annotated[list[str], typer.Argument(help="The log (file, directory, .gz, or - for stdin).")],
        model: Annotated[str | None, typer.Option("--model", "-m", help="litellm model string.")] = None,
        api_base: Annotated[str | None, typer.Option("--api-base", help="Base URL of an OpenAI-compatible server.")] = None,
        retrieval: Annotated[
            bool | None, typer.Option("--retrieval/--no-retrieval", help="Use the vector index.", show_default=False)
        ] = None,
        llm_timeout: LLMTimeoutOption = None,
        max_tokens: MaxTokensOption = None,
        context: ContextOption = None,
        fast: FastOption = False,
    ) -> None:
        """Diagnose a log, then answer follow-up questions about it (/evidence, /fix, /verify, /quit).

        Questions are read from the terminal, or line by line from stdin when it is not a terminal
        (a scripted session); pass the log as a file then.
        """
        from diagnose.chat.conversation import ask_stream
        from diagnose.chat.session import Answer, ChatSession
        from diagnose.errors import InputError
        from diagnose.parse.ingest import resolve_sources
        from diagnose.pipeline import chat_responder, diagnose, open_backends
        from diagnose.render.report import print_report

        if "-" in paths and not sys.stdin.isatty():
            questions = _terminal()
            if questions is None:
                raise InputError("with the log on stdin, questions need a terminal: pass the log as a file instead")
        settings = model_settings(model, api_base, retrieval, llm_timeout, max_tokens, context, fast)
        llm, index = open_backends(settings)
        result = diagnose(resolve_sources(paths), settings=settings, llm=llm, index=index)
        out = console()
        print_report(result.diagnosis, out)
        session = ChatSession(
            diagnosis=result.diagnosis, log=result.log, redactor_state=result.redactor_state, flight_recorder=result.flight_recorder
        )
        responder = chat_responder(llm)
        if "-" in paths and not sys.stdin.isatty():
            sys.stdin = questions  # the log came through the pipe; questions come from the terminal
        interactive = sys.stdin.isatty()
        history = interactive and _start_history()
        out.print(f"\n[dim]{HELP}[/dim]")
        while True:
            try:
                question = input("> " if interactive else "").strip()
            except EOFError:
                break
            if not question:
                continue
            if question in ("/quit", "/exit"):
                break
            if not interactive:
                out.print(f"> {question}", highlight=False, markup=False)
            for piece in ask_stream(session, COMMANDS.get(question, question), responder=responder):
                if isinstance(piece, Answer):
                    _print_citations(piece, out)
                else:
                    out.print(piece, end="", highlight=False, markup=False)
            out.print()
            if history:
                _remember(session.history[-2].content)  # the question as masked and recorded


def _print_citations(answer: object, out: object) -> None:
    from diagnose.chat.session import Answer

    assert isinstance(answer, Answer)
    label = "sources" if answer.grounded else "closest material (not a grounded answer)"
    refs = [
        f"{c.file}:{c.line}"
        if c.kind == "log"
        else f"kb:{c.entry_id}#{c.section}"
        if c.kind == "kb"
        else f"{c.file} record {c.record_id}"
        if c.record_id is not None
        else f"{c.file} pg_status"
        for c in answer.citations
    ]
    out.print(f"\n[dim]{label}: {', '.join(refs) or 'none'}[/dim]")  # type: ignore[attr-defined]
