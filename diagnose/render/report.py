"""Render a Diagnosis for people: a rich report on a terminal (plain text when piped), or Markdown."""

from __future__ import annotations

from rich.console import Console
from rich.markup import escape

from diagnose.llm.sanitize import UNVERIFIED, clean_text
from diagnose.rank_ranges import rank_ranges
from diagnose.schema import Diagnosis

EVIDENCE_CHARS = 300


def _t(text: str) -> str:
    """Text safe for the terminal: control sequences stripped (a model may have written it), markup escaped."""
    return escape(clean_text(text))


def _rank_text(diagnosis: Diagnosis) -> str:
    if diagnosis.initiating_rank is None and diagnosis.initiating_host is None:
        return "not shown in the log"
    rank = f"rank {diagnosis.initiating_rank}" if diagnosis.initiating_rank is not None else "rank unknown"
    if len(diagnosis.initiating_ranks) > 1:  # several (Flight Recorder dumps can name several)
        rank = "ranks " + ", ".join(map(str, diagnosis.initiating_ranks))
    host = f" on {diagnosis.initiating_host}" if diagnosis.initiating_host else ""
    return rank + host


def print_report(diagnosis: Diagnosis, console: Console) -> None:
    """The terminal report: root cause, where, evidence, collateral, fix, verify."""
    root = diagnosis.root_cause
    if diagnosis.is_unknown:
        console.print("[bold yellow]No known failure found[/bold yellow] (root cause: unknown)")
    else:
        console.print(
            f"[bold red]Root cause:[/bold red] [bold]{_t(root.title)}[/bold] [dim]({root.id}, confidence {root.confidence:.2f})[/dim]"
        )
    console.print(f"[bold]Initiating:[/bold] {_t(_rank_text(diagnosis))}")
    if diagnosis.flight_recorder is not None:
        console.print(f"[bold]Flight Recorder:[/bold] {_t(_dumps_text(diagnosis))}")
    if diagnosis.mechanism:
        console.print(f"\n[bold]Mechanism[/bold]\n{_t(diagnosis.mechanism)}")
    if diagnosis.model_explanation:
        console.print(f"\n[bold]The model's explanation[/bold] [dim]({UNVERIFIED})[/dim]\n{_t(diagnosis.model_explanation)}")
    if diagnosis.evidence:
        title = "Evidence" if not diagnosis.is_unknown else "Most suspicious lines"
        console.print(f"\n[bold]{title}[/bold]")
        for item in diagnosis.evidence:
            where = (
                f"{item.file}:{item.line}"
                if item.kind == "log"
                else f"{item.file} " + (f"record {item.record_id}" if item.record_id is not None else "pg_status")
            )
            console.print(f"  [cyan]{_t(where)}[/cyan]  {_t(item.text.strip()[:EVIDENCE_CHARS])}")
    if diagnosis.collateral:
        console.print("\n[bold]Collateral[/bold] (consequences, not causes)")
        for group in diagnosis.collateral:
            ranks = rank_ranges(group.ranks)
            console.print(f"  - {_t(group.summary)}" + (f" [dim]ranks {ranks}[/dim]" if ranks else ""))
    if diagnosis.fix:
        console.print("\n[bold green]Fix[/bold green]")
        for number, step in enumerate(diagnosis.fix, 1):
            console.print(f"  {number}. {_t(step)}")
    if diagnosis.verify:
        console.print("\n[bold green]Verify[/bold green]")
        for command in diagnosis.verify:
            console.print(f"  $ {_t(command)}")
    if diagnosis.next_run:
        console.print("\n[bold]Before the next run[/bold]")
        for advice in diagnosis.next_run:
            console.print(f"  - {_t(advice)}")
    if len(diagnosis.candidates) > 1:
        others = ", ".join(f"{c.id} ({c.score:.2f})" for c in diagnosis.candidates[1:4])
        console.print(f"\n[dim]Other candidates: {_t(others)}[/dim]")
    masked = diagnosis.redactions
    if masked.total:
        kinds = ", ".join(f"{count} {kind}" for kind, count in sorted(masked.by_type.items()))
        console.print(f"[dim]Masked before analysis: {_t(kinds)}[/dim]")
    for note in diagnosis.notes:
        console.print(f"[dim]note: {_t(note)}[/dim]")
    console.print(f"[dim]backend: {_t(diagnosis.backend)}[/dim]")


def _dumps_text(diagnosis: Diagnosis) -> str:
    """One line of what the dumps say: who the others wait for, at which collective, in which process group."""
    fr = diagnosis.flight_recorder
    assert fr is not None
    if fr.kind == "none" or not fr.initiating_ranks:
        return f"{fr.dumps} dump(s): no rank waits for another"
    who = "ranks " + ", ".join(map(str, fr.initiating_ranks))
    what = "differ from the others" if fr.kind == "mismatch" else "are the ranks the others wait for"
    where = f" at {fr.collective} #{fr.sequence}" if fr.collective else ""
    group = f" in process group {fr.process_group} ({fr.process_group_size} ranks)" if fr.process_group else ""
    missing = f"; no dump from ranks {rank_ranges(fr.missing_dumps)}" if fr.missing_dumps else ""
    return f"{who} {what}{where}{group} ({fr.dumps} dumps{missing})"
