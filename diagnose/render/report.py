"""Render a Diagnosis for people: a rich report on a terminal (plain text when piped), or Markdown."""

from __future__ import annotations

from rich.console import Console
from rich.markup import escape

from diagnose.schema import Diagnosis

EVIDENCE_CHARS = 300


def _rank_text(diagnosis: Diagnosis) -> str:
    if diagnosis.initiating_rank is None and diagnosis.initiating_host is None:
        return "not shown in the log"
    rank = f"rank {diagnosis.initiating_rank}" if diagnosis.initiating_rank is not None else "rank unknown"
    host = f" on {diagnosis.initiating_host}" if diagnosis.initiating_host else ""
    return rank + host


def print_report(diagnosis: Diagnosis, console: Console) -> None:
    """The terminal report: root cause, where, evidence, collateral, fix, verify."""
    root = diagnosis.root_cause
    if diagnosis.is_unknown:
        console.print("[bold yellow]No known failure found[/bold yellow] (root cause: unknown)")
    else:
        console.print(f"[bold red]Root cause:[/bold red] [bold]{escape(root.title)}[/bold] "
                      f"[dim]({root.id}, confidence {root.confidence:.2f})[/dim]")
    console.print(f"[bold]Initiating:[/bold] {escape(_rank_text(diagnosis))}")
    if diagnosis.mechanism:
        console.print(f"\n[bold]Mechanism[/bold]\n{escape(diagnosis.mechanism)}")
    if diagnosis.evidence:
        title = "Evidence" if not diagnosis.is_unknown else "Most suspicious lines"
        console.print(f"\n[bold]{title}[/bold]")
        for item in diagnosis.evidence:
            console.print(f"  [cyan]{escape(item.file)}:{item.line}[/cyan]  {escape(item.text.strip()[:EVIDENCE_CHARS])}")
    if diagnosis.collateral:
        console.print("\n[bold]Collateral[/bold] (consequences, not causes)")
        for group in diagnosis.collateral:
            ranks = _compact(group.ranks)
            console.print(f"  - {escape(group.summary)}" + (f" [dim]ranks {ranks}[/dim]" if ranks else ""))
    if diagnosis.fix:
        console.print("\n[bold green]Fix[/bold green]")
        for number, step in enumerate(diagnosis.fix, 1):
            console.print(f"  {number}. {escape(step)}")
    if diagnosis.verify:
        console.print("\n[bold green]Verify[/bold green]")
        for command in diagnosis.verify:
            console.print(f"  $ {escape(command)}")
    if diagnosis.next_run:
        console.print("\n[bold]Before the next run[/bold]")
        for advice in diagnosis.next_run:
            console.print(f"  - {escape(advice)}")
    if len(diagnosis.candidates) > 1:
        others = ", ".join(f"{c.id} ({c.score:.2f})" for c in diagnosis.candidates[1:4])
        console.print(f"\n[dim]Other candidates: {escape(others)}[/dim]")
    masked = diagnosis.redactions
    if masked.total:
        kinds = ", ".join(f"{count} {kind}" for kind, count in sorted(masked.by_type.items()))
        console.print(f"[dim]Masked before analysis: {escape(kinds)}[/dim]")
    for note in diagnosis.notes:
        console.print(f"[dim]note: {escape(note)}[/dim]")
    console.print(f"[dim]backend: {escape(diagnosis.backend)}[/dim]")


def _compact(ranks: list[int]) -> str:
    """0,1,2,3,7 -> '0-3,7'."""
    if not ranks:
        return ""
    parts: list[str] = []
    start = prev = ranks[0]
    following: list[int | None] = [*ranks[1:], None]
    for rank in following:
        if rank is not None and rank == prev + 1:
            prev = rank
            continue
        parts.append(f"{start}-{prev}" if prev != start else str(start))
        if rank is not None:
            start = prev = rank
    return ",".join(parts)
