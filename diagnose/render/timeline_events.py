"""Timeline events from a diagnosis: the log's findings (rank, time, reading order, role), or the dumps' verdict.

``timeline_svg(diagnosis, log, verdict)`` is what the CLI's ``--timeline`` and the web page draw: the SVG of
``diagnose.render.timeline`` for every diagnosis that involves more than one rank, else None.
"""

from __future__ import annotations

from diagnose.engine.fr_models import FRVerdict
from diagnose.parse.parsed_log import ParsedLog
from diagnose.render.timeline import TimelineEvent, render_timeline, timeline_from_verdict
from diagnose.schema import Diagnosis

__all__ = ["MAX_EVENTS", "events_from_log", "first_observed_rank", "timeline_svg"]

MAX_EVENTS = 50_000
"""Findings beyond this many are left out of the timeline (the rows group ranks anyway)."""


def events_from_log(log: ParsedLog) -> list[TimelineEvent]:
    """One event per finding with a rank (noise left out): when, in which reading order, its role, its entry."""
    events: list[TimelineEvent] = []
    for f in log.findings:
        if f.rank is None or f.role == "noise":
            continue
        events.append(TimelineEvent(rank=f.rank, t=f.timestamp, order=f.order, kind=f.role, label=f.entry_id))
        if len(events) >= MAX_EVENTS:
            break
    return events


def first_observed_rank(log: ParsedLog) -> int | None:
    """The rank torchelastic's ChildFailedError report calls "Root Cause (first observed failure)": a hint, not the cause."""
    for record in log.failure_records:
        if record.get("root_cause") == "yes" and record.get("rank", "").isdigit():
            return int(record["rank"])
    return None


def timeline_svg(diagnosis: Diagnosis, log: ParsedLog, verdict: FRVerdict | None = None) -> str | None:
    """The failure timeline as SVG when the diagnosis involves more than one rank; None otherwise.

    When the dumps decided the diagnosis (or the log has no ranked findings) the dumps' view is drawn (in dump
    order: dumps hold no failure time); otherwise the log's findings, by time when every one has a timestamp.
    """
    from_dumps = diagnosis.flight_recorder is not None and diagnosis.flight_recorder.decided
    events = [] if from_dumps else events_from_log(log)
    source, axis = "the log", "log order (no timestamps)"
    if not events and verdict is not None:
        events, source = timeline_from_verdict(verdict), "Flight Recorder dumps"
        axis = "the stalled ranks, then the ranks waiting for them (dumps record no failure time)"
    ranks = {e.rank for e in events} | set(diagnosis.initiating_ranks)
    if len(ranks) < 2:
        return None
    first_observed = None if from_dumps else first_observed_rank(log)
    title = f"{diagnosis.root_cause.title} ({diagnosis.root_cause.id}): timeline from {source}"
    return render_timeline(
        events,
        initiating_ranks=diagnosis.initiating_ranks,
        first_observed_rank=first_observed,
        hosts=log.hosts or None,
        title=title,
        order_axis=axis,
    )
