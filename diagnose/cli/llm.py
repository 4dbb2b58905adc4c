"""``diagnose llm check``: what model is configured, what is missing, and whether it answers."""

from __future__ import annotations

from typing import Annotated

import typer

from diagnose.cli.errors import handle_errors
from diagnose.cli.output import console

app = typer.Typer(no_args_is_help=True, help="The optional LLM backend (any litellm model string).")


@app.command("check")
@handle_errors
def check(
    model: Annotated[str | None, typer.Option("--model", "-m", help="litellm model string.")] = None,
    api_base: Annotated[str | None, typer.Option("--api-base", help="Base URL of an OpenAI-compatible server.")] = None,
    ping: Annotated[bool, typer.Option("--ping/--no-ping", help="Send one tiny request to the model.")] = True,
) -> None:
    """Say which model is configured and what is missing; exit 1 when it cannot be used."""
    from diagnose.errors import LLMError
    from diagnose.settings import load_settings, user_dir

    settings = load_settings(model=model, api_base=api_base)
    out = console()
    if not settings.model:
        out.print("No model configured: diagnose runs rules + encyclopedia + retrieval, fully offline.")
        out.print(f"To add one: --model, $DIAGNOSE_MODEL, or model = \"...\" in {user_dir() / 'config.toml'}")
        out.print("Examples: openai/gpt-4o-mini, anthropic/claude-3-5-haiku-latest, ollama_chat/llama3.1, "
                  "openai/<name> with --api-base http://127.0.0.1:8080/v1 (llama.cpp, vLLM)")
        return
    from diagnose.llm.client import LiteLLMClient, missing_keys

    out.print(f"model: {settings.model}")
    out.print(f"api base: {settings.api_base or '(provider default)'}")
    missing = missing_keys(settings)
    if missing:
        out.print(f"[red]missing environment variables:[/red] {', '.join(missing)}")
        raise typer.Exit(1)
    out.print("keys: ok")
    if ping:
        try:
            reply = LiteLLMClient(settings).complete([{"role": "user", "content": "Reply with the word ok."}])
        except LLMError as exc:
            out.print(f"[red]model did not answer:[/red] {exc}")
            raise typer.Exit(1) from None
        out.print(f"model answered: {reply.strip()[:80]!r}")
