"""``diagnose llm check``: what model is configured, what is missing, and whether its diagnosis answer would be used.

Also the model options every command that can ask a model shares (``--llm-timeout``, ``--max-tokens``,
``--context``, ``--fast``).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Annotated

import typer

from diagnose.cli.errors import handle_errors
from diagnose.cli.output import console

if TYPE_CHECKING:
    from diagnose.settings import Settings

app = typer.Typer(no_args_is_help=True, help="The optional LLM backend (any litellm model string).")

LLMTimeoutOption = Annotated[
    float | None,
    typer.Option(
        "--llm-timeout", help="Seconds to wait for the model's answer; a timed-out request is not sent again.", show_default=False
    ),
]
MaxTokensOption = Annotated[
    int | None,
    typer.Option("--max-tokens", help="Most tokens the model may write per answer (default: sized to the answer).", show_default=False),
]
ContextOption = Annotated[
    int | None,
    typer.Option("--context", help="The model's context window in tokens (default: litellm's figure, else 8192).", show_default=False),
]
FastOption = Annotated[
    bool, typer.Option("--fast", help="For small local CPU models: 2k tokens of log windows, fewer candidates, shorter answers.")
]


def model_settings(
    model: str | None,
    api_base: str | None,
    retrieval: bool | None,
    llm_timeout: float | None,
    max_tokens: int | None,
    context: int | None,
    fast: bool,
) -> Settings:
    """Settings from the flags every command that can ask a model shares; a flag not given (None, ``--fast`` left
    off) defers to the environment and ``config.toml``."""
    from diagnose.settings import load_settings

    return load_settings(
        model=model,
        api_base=api_base,
        retrieval=retrieval,
        llm_timeout=llm_timeout,
        max_tokens=max_tokens,
        context=context,
        fast=fast or None,
    )


CHECK_LOG = """\
[rank0]:[W1128 14:24:01 ProcessGroupNCCL.cpp:4115] using GPU 0 to perform barrier
[rank1]:[W1128 14:24:01 ProcessGroupNCCL.cpp:4115] using GPU 1 to perform barrier
[rank1]: Traceback (most recent call last):
[rank1]:   File "/workspace/train.py", line 198, in main
[rank1]:     logits = logits.float()
[rank1]: torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 3.91 GiB. GPU 1 has a total capacity of 79.15 GiB \
of which 2.06 GiB is free.
W1128 14:24:22.377000 201544 torch/distributed/elastic/multiprocessing/api.py:897] Sending process 201601 closing signal SIGTERM
[rank0]:[E1128 14:34:21.477019 ProcessGroupNCCL.cpp:616] [Rank 0] Watchdog caught collective operation timeout: \
WorkNCCL(SeqNum=52417, OpType=ALLREDUCE, NumelIn=65536000, NumelOut=65536000, Timeout(ms)=600000) ran for 600041 \
milliseconds before timing out.
"""
"""A small run that died of a GPU OOM on rank 1: the diagnosis request ``llm check`` sends."""


def _why_not_used(notes: list[str]) -> str:
    for note in reversed(notes):
        if note.startswith(("model answer rejected", "model unavailable", "the prompt was too large")):
            return note
    return "the model's answer was not used"


@app.command("check")
@handle_errors
def check(
    model: Annotated[str | None, typer.Option("--model", "-m", help="litellm model string.")] = None,
    api_base: Annotated[str | None, typer.Option("--api-base", help="Base URL of an OpenAI-compatible server.")] = None,
    ping: Annotated[bool, typer.Option("--ping/--no-ping", help="Send one small diagnosis request to the model.")] = True,
    llm_timeout: LLMTimeoutOption = None,
    max_tokens: MaxTokensOption = None,
    context: ContextOption = None,
    fast: FastOption = False,
) -> None:
    """Say which model is configured and what is missing, then send one small diagnosis request (the JSON answer
    ``diagnose log`` relies on) and say whether its answer would be used; exit 1 when it would not.
    """
    from diagnose.settings import user_dir

    settings = model_settings(model, api_base, None, llm_timeout, max_tokens, context, fast)
    out = console()
    if not settings.model:
        out.print("No model configured: diagnose runs rules + encyclopedia + retrieval, fully offline.")
        out.print(f'To add one: --model, $DIAGNOSE_MODEL, or model = "..." in {user_dir() / "config.toml"}')
        out.print(
            "Examples: openai/gpt-4o-mini, anthropic/claude-3-5-haiku-latest, ollama_chat/llama3.1, "
            "openai/<name> with --api-base http://127.0.0.1:8080/v1 (llama.cpp, vLLM)"
        )
        return
    from diagnose.llm.client import LiteLLMClient, context_window, missing_keys

    out.print(f"model: {settings.model}", highlight=False, markup=False)
    out.print(f"api base: {settings.api_base or '(provider default)'}", highlight=False, markup=False)
    window = context_window(settings.model, settings.context)
    out.print(
        f"context window: {window} tokens; timeout {settings.llm_timeout:g} s; fast: {str(settings.fast).lower()}",
        highlight=False,
        markup=False,
    )
    missing = missing_keys(settings)
    if missing:
        out.print(f"[red]missing environment variables:[/red] {', '.join(missing)}")
        raise typer.Exit(1)
    out.print("keys: ok")
    if not ping:
        return
    from rich.markup import escape

    from diagnose.llm.sanitize import clean_text
    from diagnose.parse.ingest import Source
    from diagnose.pipeline import diagnose

    quiet = settings.model_copy(update={"retrieval": False, "llm_cache_days": 0.0})
    result = diagnose([Source(name="check.log", path=None, data=CHECK_LOG.encode())], settings=quiet, llm=LiteLLMClient(quiet))
    d = result.diagnosis
    if d.backend != settings.model:
        out.print("[red]diagnosis answer would not be used:[/red] " + escape(clean_text(_why_not_used(d.notes))), highlight=False)
        raise typer.Exit(1)
    rank = d.initiating_rank if d.initiating_rank is not None else "unknown"
    out.print(f"diagnosis answer used: root cause {d.root_cause.id}, rank {rank}", highlight=False, markup=False)
