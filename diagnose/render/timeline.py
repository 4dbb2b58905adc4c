"""A failure timeline as one standalone, accessible SVG string: ranks down, time (or log order) across.

``render_timeline(events, initiating_ranks=[9])`` is pure: no clock, no files, no scripts, no external
assets. The initiating rank's first failure is drawn in a strong colour with its label; collateral
(cascade timeouts, teardown signals, noise) is muted. Large runs stay readable: ranks (or hosts, when a
host map is given) with the same event pattern collapse into one row such as
``ranks 16-511 (496): timeout at t=+601.2..+603.9 s``, and the row count is capped.

``timeline_from_verdict(verdict)`` turns a Flight Recorder verdict into events (in dump order).
"""

from __future__ import annotations

import re
from collections import defaultdict
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Literal
from xml.sax.saxutils import escape, quoteattr

from diagnose.engine.flight_recorder import FRVerdict
from diagnose.rank_ranges import rank_ranges

__all__ = ["TimelineEvent", "render_timeline", "timeline_from_verdict"]

Kind = Literal["initiating", "cascade", "teardown", "noise"]
COLORS: dict[str, str] = {"initiating": "#b71c1c", "cascade": "#78909c", "teardown": "#b0bec5", "noise": "#cfd8dc"}
SEVERITY = {"initiating": 0, "cascade": 1, "teardown": 2, "noise": 3}
WIDTH, LABEL_W, ROW_H, TOP = 1000, 300, 24, 92
_CTRL = re.compile(r"[\x00-\x08\x0b\x0c\x0e-\x1f\ufffe\uffff]")


@dataclass(frozen=True)
class TimelineEvent:
    """One thing that happened on one rank: when (seconds, any origin; None = unknown), its log order, its role, a label."""

    rank: int
    t: float | None
    order: int
    kind: Kind
    label: str


@dataclass
class _Row:
    label: str
    ranks: list[int]
    events: list[TimelineEvent]
    special: str = ""


def _clean(text: str, limit: int = 80) -> str:
    text = _CTRL.sub("?", text)
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _shape(events: Sequence[TimelineEvent], fine: bool) -> tuple[str, ...]:
    """What a unit's events look like, numbers blurred so ranks that did the same thing group together."""
    ordered = sorted(events, key=lambda e: e.order)
    return tuple(e.kind + (":" + re.sub(r"\d+", "#", e.label) if fine else "") for e in ordered)


def _group(units: list[tuple[str, list[int], list[TimelineEvent]]], budget: int, hosts: bool) -> list[_Row]:
    """Collapse units with the same pattern into rows, coarsening until the rows fit the budget."""
    groups: dict[tuple[str, ...], list[tuple[str, list[int], list[TimelineEvent]]]] = {}
    if hosts and len(units) <= budget:
        groups = {(str(i),): [unit] for i, unit in enumerate(units)}
    for fine in (True, False):
        if groups:
            break
        grouped: dict[tuple[str, ...], list[tuple[str, list[int], list[TimelineEvent]]]] = defaultdict(list)
        for unit in units:
            grouped[_shape(unit[2], fine)].append(unit)
        if len(grouped) <= budget or not fine:
            groups = grouped
    rows: list[_Row] = []
    for members in sorted(groups.values(), key=lambda us: min(min(u[1]) for u in us)):
        ranks = sorted(r for u in members for r in u[1])
        events = [e for u in members for e in u[2]]
        if len(members) == 1 and hosts:
            label = f"{members[0][0]} (ranks {rank_ranges(ranks)})"
        elif len(ranks) == 1:
            label = f"rank {ranks[0]}"
        else:
            label = (f"{len(members)} hosts, " if hosts else "") + f"ranks {rank_ranges(ranks)} ({len(ranks)})"
        rows.append(_Row(label, ranks, events))
    if len(rows) > budget:
        rest = rows[budget - 1 :]
        ranks = sorted(r for row in rest for r in row.ranks)
        rows = [
            *rows[: budget - 1],
            _Row(f"{len(rest)} more patterns: ranks {rank_ranges(ranks, 2)} ({len(ranks)})", ranks, [e for r in rest for e in r.events]),
        ]
    return rows


def _rows(
    events: Sequence[TimelineEvent], initiating: Sequence[int], first_observed: int | None, hosts: Mapping[int, str] | None, max_rows: int
) -> list[_Row]:
    by_rank: dict[int, list[TimelineEvent]] = defaultdict(list)
    for e in events:
        by_rank[e.rank].append(e)
    special = [r for r in dict.fromkeys([*initiating, *([first_observed] if first_observed is not None else [])])]
    rows = [
        _Row(f"rank {r}", [r], by_rank.get(r, []), "initiating")
        if r in initiating
        else _Row(f"rank {r}: launcher's first report", [r], by_rank.get(r, []), "first-observed")
        for r in special
    ]
    units: list[tuple[str, list[int], list[TimelineEvent]]] = []
    if hosts:
        per_host: dict[str, list[int]] = defaultdict(list)
        for r in sorted(by_rank):
            if r not in special:
                per_host[hosts.get(r, "unknown host")].append(r)
        units = [(h, rs, [e for r in rs for e in by_rank[r]]) for h, rs in per_host.items()]
    else:
        units = [(f"rank {r}", [r], by_rank[r]) for r in sorted(by_rank) if r not in special]
    return rows + (_group(units, max(1, max_rows - len(rows)), bool(hosts)) if units else [])


def _row_text(row: _Row, when: str, budget: int = 52) -> str:
    """The row's headline: its most severe event (an example when the row groups several ranks) and when."""
    first = min(row.events, key=lambda e: (SEVERITY[e.kind], e.order), default=None)
    if first is None:
        return "no event"
    example = "e.g. " if len(row.ranks) > 1 else ""
    more = f" (+{len(row.events) - 1} more)" if len(row.events) > 1 and len(row.ranks) == 1 else ""
    return f"{example}{_clean(first.label, budget - len(example))}{when}{more}"


def render_timeline(
    events: Sequence[TimelineEvent],
    *,
    initiating_ranks: Sequence[int],
    first_observed_rank: int | None = None,
    hosts: Mapping[int, str] | None = None,
    title: str = "Failure timeline",
    max_rows: int = 40,
    order_axis: str = "log order (no timestamps)",
) -> str:
    """The timeline as a standalone SVG string (``role="img"``, ``<title>``, ``<desc>``, text labels, every text escaped).

    ``hosts`` (rank -> masked host) groups rows by node; without it, ranks with the same event pattern share a row.
    The initiating ranks and ``first_observed_rank`` (torchelastic's "first observed failure", labelled as the
    launcher's first report, not necessarily the cause) always get their own rows. At most ``max_rows`` rows.
    ``order_axis`` names the horizontal axis when the events have no times.
    """
    timed = bool(events) and all(e.t is not None for e in events)

    def pos(e: TimelineEvent) -> float:
        return float(e.t) if timed and e.t is not None else float(e.order)

    t0 = min((pos(e) for e in events), default=0.0)
    span = max((pos(e) for e in events), default=1.0) - t0 or 1.0
    plot_w = WIDTH - LABEL_W - 40

    def x(e: TimelineEvent) -> float:
        return LABEL_W + 10 + (pos(e) - t0) / span * plot_w

    rows = _rows(events, initiating_ranks, first_observed_rank, hosts, max_rows)
    height = TOP + ROW_H * len(rows) + 40
    who = ", ".join(str(r) for r in initiating_ranks) or "none"
    summary = f"{_clean(title, 120)}: initiating rank(s) {who}; {len(rows)} rows for {len({e.rank for e in events})} ranks with events"
    axis = "time in seconds from the first event" if timed else order_axis
    out = [
        f'<svg xmlns="http://www.w3.org/2000/svg" width="{WIDTH}" height="{height}" viewBox="0 0 {WIDTH} {height}" '
        f'role="img" aria-labelledby="tl-title tl-desc" aria-label={quoteattr(summary)} font-family="sans-serif" font-size="12">',
        f'<title id="tl-title">{escape(_clean(title, 120))}</title>',
        f'<desc id="tl-desc">{escape(summary)}. Horizontal axis: {axis}.</desc>',
        f'<rect width="{WIDTH}" height="{height}" fill="#ffffff"/>',
        f'<text x="12" y="24" font-size="16" font-weight="bold">{escape(_clean(title, 120))}</text>',
        f'<text x="12" y="44" fill="#333333">Initiating rank(s): {escape(who)}. Axis: {escape(axis)}.</text>',
    ]
    out.extend(_legend(first_observed_rank is not None))
    out.extend(f'<rect x="0" y="{TOP + i * ROW_H}" width="{WIDTH}" height="{ROW_H}" fill="#f5f7f8"/>' for i in range(0, len(rows), 2))
    out.extend(_axis(timed, t0, span, plot_w, height))
    for i, row in enumerate(rows):
        cy = TOP + i * ROW_H + ROW_H / 2
        weight = ' font-weight="bold"' if row.special == "initiating" else ""
        out.append(f'<text x="12" y="{cy + 4}"{weight}>{escape(_clean(row.label, 44))}</text>')
        out.extend(_marks(row, x, timed, t0, cy))
    out.append("</svg>")
    return "\n".join(out)


def _legend(first_observed: bool) -> list[str]:
    """The key: colour and shape of each kind, and the ring of the launcher's first report."""
    legend = [("initiating", "initiating failure"), ("cascade", "collateral timeout/error"), ("teardown", "teardown signal")]
    out: list[str] = []
    for i, (kind, text) in enumerate(legend):
        lx = 12 + i * 200
        mark = (
            f'<rect x="{lx + 2}" y="58" width="8" height="8" fill="{COLORS[kind]}"/>'
            if kind == "teardown"
            else f'<circle cx="{lx + 6}" cy="62" r="5" fill="{COLORS[kind]}"/>'
        )
        out.append(f'{mark}<text x="{lx + 16}" y="66" fill="#333333">{escape(text)}</text>')
    if first_observed:
        out.append('<circle cx="618" cy="62" r="6" fill="none" stroke="#e65100" stroke-width="2"/>')
        out.append('<text x="628" y="66" fill="#333333">launcher\'s first report (a hint, not the cause)</text>')
    return out


def _axis(timed: bool, t0: float, span: float, plot_w: float, height: int) -> list[str]:
    """Grid lines and tick labels: seconds from the first event, or log order."""
    out = [f'<line x1="{LABEL_W + 10}" y1="{height - 30}" x2="{LABEL_W + 10 + plot_w}" y2="{height - 30}" stroke="#90a4ae"/>']
    values = [span * i / 4 for i in range(5)] if timed else sorted({round(span * i / 4) for i in range(5)})
    for value in values:
        tick = LABEL_W + 10 + plot_w * value / span
        text = f"+{value:.1f} s" if timed else f"#{int(t0 + value)}" if span > 1 else ("earlier" if value == 0 else "later")
        anchor = "start" if value == 0 else "end" if value >= span else "middle"
        out.append(f'<line x1="{tick:.1f}" y1="{TOP - 4}" x2="{tick:.1f}" y2="{height - 30}" stroke="#dfe4e7"/>')
        out.append(f'<text x="{tick:.1f}" y="{height - 14}" text-anchor="{anchor}" fill="#555555">{escape(text)}</text>')
    return out


def _marks(row: _Row, x: Callable[[TimelineEvent], float], timed: bool, t0: float, cy: float) -> list[str]:
    """Markers for one row: a bar over the row's spread, one dot per kind, the first failure labelled."""
    out: list[str] = []
    by_kind: dict[str, list[TimelineEvent]] = defaultdict(list)
    for e in row.events:
        by_kind[e.kind].append(e)
    for kind in sorted(by_kind, key=lambda k: -SEVERITY[k]):
        evs = sorted(by_kind[kind], key=lambda e: (x(e), e.order))
        lo, hi = x(evs[0]), x(evs[-1])
        if hi - lo > 1:
            out.append(f'<rect x="{lo:.1f}" y="{cy - 3}" width="{hi - lo:.1f}" height="6" rx="3" fill="{COLORS[kind]}" opacity="0.6"/>')
        shape = "rect" if kind == "teardown" else "circle"
        size = 7 if kind == "initiating" else 5
        for e in [evs[0], evs[-1]] if len(evs) > 1 else evs:
            if shape == "circle":
                out.append(f'<circle cx="{x(e):.1f}" cy="{cy}" r="{size}" fill="{COLORS[kind]}"/>')
            else:
                out.append(f'<rect x="{x(e) - 4:.1f}" y="{cy - 4}" width="8" height="8" fill="{COLORS[kind]}"/>')
    if row.special == "first-observed" and row.events:
        first = min(row.events, key=lambda e: e.order)
        out.append(f'<circle cx="{x(first):.1f}" cy="{cy}" r="9" fill="none" stroke="#e65100" stroke-width="2"/>')
    main = min(row.events, key=lambda e: (SEVERITY[e.kind], e.order), default=None)
    if main is not None:
        when = ""
        if timed and main.t is not None:
            times = [e.t - t0 for e in row.events if e.kind == main.kind and e.t is not None]
            lo_t, hi_t = min(times), max(times)
            when = f" at t=+{lo_t:.1f} s" if hi_t - lo_t < 0.05 else f" at t=+{lo_t:.1f}..+{hi_t:.1f} s"
        text = _row_text(row, when, 40 if row.special == "first-observed" else 64)
        if row.special == "first-observed":
            text = "not necessarily the cause: " + text
        bold = ' font-weight="bold"' if main.kind == "initiating" else ""
        color = "#b71c1c" if main.kind == "initiating" else "#37474f"
        tx = min(x(main) + 12, WIDTH - 10)
        anchor = ' text-anchor="end"' if tx > WIDTH - 330 else ""
        tx = tx if not anchor else x(main) - 12
        out.append(f'<text x="{tx:.1f}" y="{cy + 4}" fill="{color}"{bold}{anchor}>{escape(_clean(text, 95))}</text>')
    return out


def timeline_from_verdict(verdict: FRVerdict) -> list[TimelineEvent]:
    """Events for ``render_timeline`` from a Flight Recorder verdict: the initiating ranks' stall, the waiters' timeouts.

    Dumps carry no wall-clock failure time, so events are in dump order (``t=None``).
    """
    events: list[TimelineEvent] = []
    seen: set[tuple[int, str]] = set()
    for finding in verdict.findings:
        coll = finding.collective
        where = f"{coll.op} #{coll.seq_id} in {finding.process_group.desc or finding.process_group.name}" if coll else "?"
        for r in finding.initiating_ranks:
            state = finding.initiating_state.get(r, "").replace("-", " ")
            if (r, "i") not in seen:
                seen.add((r, "i"))
                events.append(TimelineEvent(r, None, 0, "initiating", f"{state}: {where}"))
        for r in finding.waiting_ranks:
            if (r, "w") not in seen:
                seen.add((r, "w"))
                events.append(TimelineEvent(r, None, 1, "cascade", f"waits at {where}"))
    return events
