"""Planted secrets in a dump never reach the analysis, the chat helpers or the rendered timeline."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from diagnose.engine.flight_recorder import analyze, last_completed, stuck_in
from diagnose.parse.flight_recorder import load_dumps
from diagnose.render.timeline import render_timeline, timeline_from_verdict
from redaction import Redactor

HOME = "/home/alice/projects/llm/train.py"
HOST = "gpu-node-017.cluster.internal"
TOKEN = "hf_" + "aZ3kQ9mPx7LwR2tYvB8nC4dE6fG1hJ5sK0"
PLANTED = ("alice", HOST, "gpu-node-017", TOKEN)


def _planted_run(generator: Any, folder: Path, form: str) -> None:
    """A 4-rank hang (rank 3 never joins) whose strings carry a home path, a host name and a token."""
    desc = f"TP group on {HOST} token={TOKEN}"
    groups = {"0": ("default_pg", [0, 1, 2, 3]), "1": (desc, [0, 1, 2, 3])}
    for rank in range(4):
        entries = []
        if rank != 3:
            e = generator.entry(40 + rank, ("1", desc), 12, "all_reduce", t=rank)
            e["frames"] = [{"name": f"step_on_{HOST}", "filename": HOME, "line": 7}]
            e["thread_name"] = f"{HOST}:worker"
            entries.append(e)
        body = generator.dump(groups, {"0": (2, 2), "1": (11 if rank == 3 else 12, 11)}, entries)
        body["hostname"] = HOST
        (folder / f"{HOST}_dump_{rank}").write_bytes(generator.encode(body, form))


@pytest.mark.parametrize("form", ["json", "pickle"])
def test_planted_values_never_leave_the_parser(form: str, generator: Any, tmp_path: Path) -> None:
    _planted_run(generator, tmp_path, form)
    redactor = Redactor()
    dumps = load_dumps(tmp_path, redactor)
    verdict = analyze(dumps)
    assert verdict.initiating_ranks == [3]
    svg = render_timeline(timeline_from_verdict(verdict), initiating_ranks=verdict.initiating_ranks, title=verdict.reason)
    outputs = {
        "dumps": repr(dumps),
        "verdict": verdict.model_dump_json(),
        "stuck_in": stuck_in(dumps, 0).model_dump_json(),
        "last_completed": last_completed(dumps).model_dump_json(),
        "svg": svg,
    }
    for where, text in outputs.items():
        for value in PLANTED:
            assert value not in text, f"{value!r} leaked into {where}"
    frame = dumps[0].entries[0].frames[0]
    assert frame.filename.startswith("/home/<") and frame.line == 7
    assert "<TOKEN_" in dumps[0].entries[0].pg_desc and "<HOST_" in dumps[0].entries[0].pg_desc
    assert all("<HOST_" in d.file for d in dumps), "the masked file name is what citations show"


def test_placeholders_agree_with_the_log_redactor(generator: Any, tmp_path: Path) -> None:
    """The caller's Redactor masked the host in the log first: the dump reuses the same placeholder."""
    _planted_run(generator, tmp_path, "json")
    redactor = Redactor()
    log_line = redactor.redact_line(f"MASTER_ADDR={HOST}")
    placeholder = log_line.split("=", 1)[1]
    dumps = load_dumps(tmp_path, redactor)
    assert placeholder in dumps[0].entries[0].pg_desc
