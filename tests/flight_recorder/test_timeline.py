"""The SVG timeline: standalone, accessible, escaped, and readable from 8 to 512 ranks."""

from __future__ import annotations

import random
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

from diagnose.engine.flight_recorder import analyze
from diagnose.parse.flight_recorder import load_dumps
from diagnose.render.timeline import TimelineEvent, render_timeline, timeline_from_verdict
from redaction import Redactor

SVG = "{http://www.w3.org/2000/svg}"


def scenario(n: int, initiating: tuple[int, ...], *, timed: bool = True, seed: int = 0) -> list[TimelineEvent]:
    """Initiating ranks fail at t=100; every other rank times out ~600 s later; all get SIGTERM."""
    rnd = random.Random(seed)
    events: list[TimelineEvent] = []
    for rank in range(n):
        order = len(events)
        if rank in initiating:
            label = f"[rank{rank}] CUDA error: an illegal memory access was encountered"
            events.append(TimelineEvent(rank, 100.0 + rank / 100 if timed else None, order, "initiating", label))
        else:
            label = f"[rank{rank}] Watchdog caught collective operation timeout: WorkNCCL(SeqNum=42)"
            events.append(TimelineEvent(rank, 700.0 + rnd.random() * 3 if timed else None, order, "cascade", label))
        events.append(TimelineEvent(rank, 706.0 + rnd.random() if timed else None, order + 1, "teardown", "closing signal SIGTERM"))
    return events


def parse(svg: str) -> ET.Element:
    """The SVG as XML; fails the test when it is not well-formed."""
    return ET.fromstring(svg)


def texts(root: ET.Element) -> list[str]:
    """Every text element's content."""
    return ["".join(t.itertext()) for t in root.iter(f"{SVG}text")]


def row_count(root: ET.Element) -> int:
    """Row labels sit at x=12 below the header."""
    return sum(1 for t in root.iter(f"{SVG}text") if t.get("x") == "12" and float(t.get("y", "0")) > 90)


@pytest.mark.parametrize(("n", "initiating"), [(8, (3,)), (64, (9, 14)), (512, (9, 14))])
def test_renders_and_stays_readable(n: int, initiating: tuple[int, ...]) -> None:
    svg = render_timeline(scenario(n, initiating), initiating_ranks=list(initiating), first_observed_rank=0)
    root = parse(svg)
    assert root.get("role") == "img" and root.get("aria-label")
    assert root.find(f"{SVG}title") is not None and root.find(f"{SVG}desc") is not None
    labels = texts(root)
    for rank in initiating:
        assert f"rank {rank}" in labels, f"rank {rank} has its own named row"
    assert any("CUDA error" in t for t in labels)
    assert any("launcher's first report" in t for t in labels)
    assert any("not necessarily the cause" in t for t in labels)
    assert row_count(root) <= 40
    assert "<script" not in svg.lower() and "http://" not in svg.replace("http://www.w3.org/2000/svg", "")
    assert "href" not in svg and "<image" not in svg and "<foreignObject" not in svg


def test_512_ranks_collapse_into_a_few_rows() -> None:
    root = parse(render_timeline(scenario(512, (9, 14)), initiating_ranks=[9, 14]))
    labels = texts(root)
    assert row_count(root) <= 5
    assert "ranks 0-8, 10-13, 15-511 (510)" in labels


def test_host_map_gives_one_row_per_node_when_they_fit() -> None:
    hosts = {r: f"<HOST_{r // 16 + 1}>" for r in range(512)}
    root = parse(render_timeline(scenario(512, (9,)), initiating_ranks=[9], hosts=hosts))
    labels = texts(root)
    assert "<HOST_1> (ranks 0-8, 10-15)" in labels and "<HOST_32> (ranks 496-511)" in labels
    assert row_count(root) == 33


def test_host_map_with_too_many_nodes_groups_nodes_by_pattern() -> None:
    hosts = {r: f"<HOST_{r // 8 + 1}>" for r in range(512)}
    root = parse(render_timeline(scenario(512, (9,)), initiating_ranks=[9], hosts=hosts))
    assert "63 hosts, ranks 0-7, 16-511 (504)" in texts(root)
    assert row_count(root) <= 40


def test_many_distinct_patterns_are_capped() -> None:
    events = [TimelineEvent(r, float(r + k), r * 100 + k, "cascade", f"error {k}") for r in range(512) for k in range(r % 60 + 1)]
    root = parse(render_timeline(events, initiating_ranks=[5], max_rows=12))
    assert row_count(root) == 12
    assert any("more patterns" in t for t in texts(root))


def test_log_order_when_times_are_missing() -> None:
    root = parse(render_timeline(scenario(8, (3,), timed=False), initiating_ranks=[3]))
    desc = root.find(f"{SVG}desc")
    assert desc is not None and "log order" in (desc.text or "")


def test_every_text_is_escaped() -> None:
    nasty = '<script>alert(1)</script> & "quotes" \x00\x07 ]]> <a href="http://evil">'
    events = [TimelineEvent(0, 1.0, 0, "initiating", nasty), TimelineEvent(1, 2.0, 1, "cascade", nasty)]
    svg = render_timeline(events, initiating_ranks=[0], title=nasty)
    root = parse(svg)
    assert "<script" not in svg and "<a " not in svg
    assert any("<script>" in t for t in texts(root)), "the text is shown, escaped"


def test_empty_input_still_renders() -> None:
    root = parse(render_timeline([], initiating_ranks=[]))
    assert root.get("role") == "img"


def test_flight_recorder_verdict_to_timeline(fr_shared: Path, redactor: Redactor) -> None:
    verdict = analyze(load_dumps(fr_shared / "gpu_error_2nd", redactor))
    events = timeline_from_verdict(verdict)
    assert {e.rank for e in events if e.kind == "initiating"} == {9, 14}
    root = parse(render_timeline(events, initiating_ranks=verdict.initiating_ranks, title="Flight Recorder"))
    assert {"rank 9", "rank 14"} <= set(texts(root))
