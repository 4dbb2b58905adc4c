"""Collateral lists consequences and later failures, never another reading of the root cause's own lines."""

from __future__ import annotations

from pathlib import Path

from diagnose.pipeline import diagnose

EXAMPLE = Path(__file__).resolve().parents[1] / "examples" / "multi-rank-oom.log"


def test_a_special_case_set_aside_on_the_root_line_is_not_a_later_failure() -> None:
    diagnosis = diagnose([EXAMPLE]).diagnosis
    assert diagnosis.root_cause.id == "cuda-oom"
    assert any("fragmented" in note for note in diagnosis.notes)  # the fragmentation reading is a secondary note
    assert [c.id for c in diagnosis.collateral if c.summary.startswith("later:")] == []
    assert {c.id for c in diagnosis.collateral} >= {"nccl-timeout-hang"}
