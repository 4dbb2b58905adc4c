"""``diagnose kb ...``: browse the encyclopedia."""

from __future__ import annotations

import json
from typing import Annotated

import typer

from diagnose.cli.errors import handle_errors
from diagnose.cli.output import console, err_console
from diagnose.encyclopedia.entries import get_entry, load_entries
from diagnose.settings import load_settings

app = typer.Typer(no_args_is_help=True, help="Browse and search the failure encyclopedia.")

JsonOption = Annotated[bool, typer.Option("--json", help="Print JSON instead of text.")]


@app.command("list")
@handle_errors
def list_entries(json_: JsonOption = False) -> None:
    """List every entry: id and title."""
    entries = load_entries()
    if json_:
        rows = [{"id": e.id, "title": e.title, "kind": e.kind, "tags": e.tags} for e in entries]
        typer.echo(json.dumps(rows, indent=2))
        return
    out = console()
    width = max(len(e.id) for e in entries)
    for entry in entries:
        out.print(f"[bold]{entry.id:<{width}}[/bold]  {entry.title}", highlight=False)


@app.command("show")
@handle_errors
def show_entry(entry_id: Annotated[str, typer.Argument(help="Entry id, e.g. cuda-oom.")], json_: JsonOption = False) -> None:
    """Show one entry: rendered Markdown on a terminal, every field with --json."""
    entry = get_entry(entry_id)
    if json_:
        typer.echo(json.dumps(entry.public_fields(), indent=2))
        return
    from rich.markdown import Markdown

    body = "\n\n".join(f"## {name}\n\n{text}" for name, text in entry.sections.items())
    console().print(Markdown(f"# {entry.title}\n\n`{entry.id}`\n\n{body}"))


@app.command("search")
@handle_errors
def search(
    text: Annotated[str, typer.Argument(help="Log lines or words to look up (masked lines work best).")],
    limit: Annotated[int, typer.Option("--limit", "-k", min=1, help="How many entries to return.")] = 5,
    json_: JsonOption = False,
) -> None:
    """Find the entries that explain TEXT: signature matches first, then vector similarity."""
    from diagnose.encyclopedia.index import open_index
    from diagnose.encyclopedia.retrieval import excerpt, retrieve, signature_hits

    settings = load_settings()
    index = open_index(settings)
    built = index.ensure()
    if built is not None:
        err_console().print(f"indexed {built.passages} passages from {built.entries} entries in {built.seconds:.2f} s")
    passages = retrieve([text], signature_hits(text.splitlines(), load_entries(settings.kb_dir)), index, k=limit)
    if json_:
        typer.echo(json.dumps([p.model_dump() for p in passages], indent=2))
        return
    out = console()
    if not passages:
        out.print("no matching entry")
    for passage in passages:
        out.print(f"[bold]{passage.entry_id}[/bold]  {passage.score:.3f}  {passage.section}", highlight=False)
        out.print(f"    {excerpt(passage.text, text)}", highlight=False, markup=False)


@app.command("index")
@handle_errors
def build_index(json_: JsonOption = False) -> None:
    """Rebuild the vector index of the encyclopedia (embedded, or the Chroma server of DIAGNOSE_CHROMA_URL)."""
    from diagnose.encyclopedia.index import open_index

    stats = open_index(load_settings()).build()
    if json_:
        typer.echo(stats.model_dump_json(indent=2))
        return
    console().print(
        f"indexed {stats.passages} passages from {stats.entries} entries in {stats.seconds:.2f} s\n"
        f"  at {stats.location} (embedder {stats.embedder}, kb {stats.content_hash})",
        highlight=False,
        markup=False,
    )
