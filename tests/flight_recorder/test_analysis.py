"""Analysis of Flight Recorder dumps: who the others wait for, mismatches, missing dumps, chat helpers."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from diagnose.engine.flight_recorder import FRVerdict, analyze, last_completed, stuck_in
from diagnose.parse.flight_recorder import load_dumps
from redaction import Redactor

from .conftest import FIXTURES

CASES = sorted(p.name for p in FIXTURES.iterdir() if p.is_dir())


def _verdict(folder: Path, redactor: Redactor) -> FRVerdict:
    return analyze(load_dumps(folder, redactor))


@pytest.mark.parametrize("case", CASES)
def test_synthetic_cases(case: str, redactor: Redactor) -> None:
    expected: dict[str, Any] = json.loads((FIXTURES / case / "expected.json").read_text())
    verdict = _verdict(FIXTURES / case, redactor)
    assert verdict.kind == expected["kind"]
    assert verdict.initiating_ranks == expected["initiating_ranks"]
    assert verdict.root_cause_id == expected["root_cause_id"]
    assert verdict.process_group is not None and verdict.collective is not None
    assert verdict.evidence, "every verdict cites dump entries"
    assert all(ev.file.startswith("_dump_") for ev in verdict.evidence if ev.role != "missing-dump")


@pytest.mark.parametrize(
    ("case", "group", "op", "seq", "seq_kind"),
    [
        ("mismatch_op", "default_pg", "all_reduce", 10, "collective"),
        ("mismatch_size", "default_pg", "all_reduce", 7, "collective"),
        ("missing_dump", "default_pg", "all_reduce", 5, "collective"),
        ("p2p_hang", "PIPELINE_MODEL_PARALLEL_GROUP", "send", 8, "p2p"),
        ("all_to_all_uneven", "default_pg", "all_to_all", 4, "collective"),
    ],
)
def test_group_and_collective_are_named(case: str, group: str, op: str, seq: int, seq_kind: str, redactor: Redactor) -> None:
    verdict = _verdict(FIXTURES / case, redactor)
    assert verdict.process_group is not None and verdict.process_group.desc == group
    assert verdict.collective is not None
    assert (verdict.collective.op, verdict.collective.seq_id, verdict.collective.seq_kind) == (op, seq, seq_kind)


def test_uneven_all_to_all_is_not_a_mismatch(redactor: Redactor) -> None:
    verdict = _verdict(FIXTURES / "all_to_all_uneven", redactor)
    assert verdict.kind != "mismatch"
    assert all(f.kind != "mismatch" for f in verdict.findings)


def test_missing_dump_is_listed(redactor: Redactor) -> None:
    verdict = _verdict(FIXTURES / "missing_dump", redactor)
    assert verdict.missing_dumps == [3] and verdict.world_size == 4
    assert verdict.findings[0].initiating_state == {3: "no-dump"}


def test_mismatch_evidence_cites_the_odd_rank(redactor: Redactor) -> None:
    verdict = _verdict(FIXTURES / "mismatch_op", redactor)
    odd = [ev for ev in verdict.evidence if ev.rank == 2]
    assert odd and odd[0].op == "broadcast" and odd[0].record_id == 100 and odd[0].seq_id == 10
    assert "broadcast" in verdict.reason


def test_no_wait_means_none(redactor: Redactor, generator: Any, tmp_path: Path) -> None:
    dump = generator.dump(generator.WORLD4, {"0": (4, 4)}, [])
    for rank in range(4):
        (tmp_path / f"_dump_{rank}").write_bytes(generator.encode(dump, "json"))
    verdict = analyze(load_dumps(tmp_path, redactor))
    assert verdict.kind == "none" and verdict.initiating_ranks == [] and verdict.root_cause_id is None


def test_local_pg_ids_differ_across_ranks(redactor: Redactor, generator: Any, tmp_path: Path) -> None:
    """The same group has pg_id 3 on rank 0 and pg_id 7 on rank 1: groups are matched by name, not pg_id."""
    groups = {"0": ("default_pg", [0, 1]), "12": ("TP", [0, 1])}
    tp = ("12", "TP")
    rank0 = generator.dump(groups, {"0": (1, 1), "3": (6, 5)}, [generator.entry(9, tp, 6, "all_reduce")])
    rank0["entries"][0]["pg_id"] = 3
    rank1 = generator.dump(groups, {"0": (1, 1), "7": (5, 5)}, [])
    for rank, body in enumerate((rank0, rank1)):
        (tmp_path / f"_dump_{rank}").write_bytes(generator.encode(body, "json"))
    verdict = analyze(load_dumps(tmp_path, redactor))
    assert (verdict.kind, verdict.initiating_ranks) == ("hang", [1])
    assert verdict.findings[0].initiating_state == {1: "never-entered"}
    assert verdict.last_completed[1].seq_id == 5 and verdict.last_completed[1].source == "pg_status"


def _write(folder: Path, generator: Any, bodies: list[dict[str, Any]]) -> None:
    for rank, body in enumerate(bodies):
        (folder / f"_dump_{rank}").write_bytes(generator.encode(body, "json"))


def test_a_chain_of_waits_ends_at_its_last_rank(redactor: Redactor, generator: Any, tmp_path: Path) -> None:
    """Rank 0 waits for 1 in group A; rank 1 waits for 2 in group B: rank 2 is the cause, rank 1 collateral."""
    groups = {"0": ("default_pg", [0, 1, 2]), "1": ("A", [0, 1]), "2": ("B", [1, 2])}
    a, b = ("1", "A"), ("2", "B")
    _write(
        tmp_path,
        generator,
        [
            generator.dump(groups, {"0": (1, 1), "1": (5, 4)}, [generator.entry(1, a, 5, "all_reduce")]),
            generator.dump(groups, {"0": (1, 1), "1": (4, 4), "2": (3, 2)}, [generator.entry(1, b, 3, "broadcast")]),
            generator.dump(groups, {"0": (1, 1), "2": (2, 2)}, []),
        ],
    )
    verdict = analyze(load_dumps(tmp_path, redactor))
    assert (verdict.kind, verdict.initiating_ranks) == ("hang", [2])
    assert verdict.process_group is not None and verdict.process_group.desc == "B"


def test_collectives_issued_in_a_different_order_name_both_ranks(redactor: Redactor, generator: Any, tmp_path: Path) -> None:
    """Rank 0 is in A #5 while rank 1 is in B #5: each waits for the other (a cycle), so both are named."""
    groups = {"1": ("A", [0, 1]), "2": ("B", [0, 1])}
    a, b = ("1", "A"), ("2", "B")
    _write(
        tmp_path,
        generator,
        [
            generator.dump(groups, {"1": (5, 4), "2": (4, 4)}, [generator.entry(1, a, 5, "all_reduce")]),
            generator.dump(groups, {"1": (4, 4), "2": (5, 4)}, [generator.entry(1, b, 5, "all_reduce")]),
        ],
    )
    verdict = analyze(load_dumps(tmp_path, redactor))
    assert (verdict.kind, verdict.initiating_ranks) == ("hang", [0, 1])


@pytest.mark.parametrize("run", ["gpu_error_2nd", "lock_gil_1st"])
def test_shared_runs_name_exactly_9_and_14(run: str, fr_shared: Path, redactor: Redactor) -> None:
    verdict = _verdict(fr_shared / run, redactor)
    assert verdict.kind == "hang"
    assert verdict.initiating_ranks == [9, 14]
    assert verdict.root_cause_id == "nccl-timeout-hang"
    assert verdict.process_group is not None and verdict.collective is not None
    assert set(verdict.process_group.ranks) >= {9, 14}
    assert {ev.rank for ev in verdict.evidence if ev.role == "initiator"} == {9, 14}
    tp = {f.process_group.name: f.initiating_ranks for f in verdict.findings if f.process_group.desc == "TENSOR_MODEL_PARALLEL_GROUP"}
    assert sorted(tp.values()) == [[9], [14]], "each tensor-parallel group waits for its own faulty rank"
    expected_state = "never-entered" if run == "lock_gil_1st" else "stuck-earlier"
    assert set(verdict.findings[0].initiating_state.values()) == {expected_state}


def test_verdict_round_trips_as_json(fr_shared: Path, redactor: Redactor) -> None:
    verdict = _verdict(fr_shared / "lock_gil_1st", redactor)
    assert FRVerdict.model_validate_json(verdict.model_dump_json()) == verdict


def test_stuck_in_cites_entries(fr_shared: Path, redactor: Redactor) -> None:
    dumps = load_dumps(fr_shared / "gpu_error_2nd", redactor)
    answer = stuck_in(dumps, 9)
    assert answer.status == "ok" and answer.rank == 9
    tp = [ev for ev in answer.entries if ev.pg_desc == "TENSOR_MODEL_PARALLEL_GROUP"]
    assert tp and (tp[0].file, tp[0].record_id, tp[0].seq_id, tp[0].op) == ("_dump_9", 192074, 87749, "_all_gather_base")


def test_stuck_in_without_pending_work_says_what_was_searched(fr_shared: Path, redactor: Redactor) -> None:
    dumps = load_dumps(fr_shared / "lock_gil_1st", redactor)
    answer = stuck_in(dumps, 14)
    assert answer.status == "no_data" and "completed" in answer.searched
    assert stuck_in(dumps, 99).status == "no_data"


def test_last_completed_for_every_rank(fr_shared: Path, redactor: Redactor) -> None:
    dumps = load_dumps(fr_shared / "lock_gil_1st", redactor)
    answer = last_completed(dumps)
    assert answer.status == "ok" and sorted(answer.by_rank) == list(range(16))
    tp9 = next(c for c in answer.by_rank[9] if c.pg_desc == "TENSOR_MODEL_PARALLEL_GROUP")
    tp15 = next(c for c in answer.by_rank[15] if c.pg_desc == "TENSOR_MODEL_PARALLEL_GROUP")
    assert (tp9.file, tp9.seq_id, tp9.source) == ("_dump_9", 88683, "pg_status")
    assert tp15.seq_id == 88683


def test_last_completed_names_the_op_when_the_entry_is_in_the_buffer(redactor: Redactor) -> None:
    dumps = load_dumps(FIXTURES / "all_to_all_uneven", redactor)
    ref = last_completed(dumps).by_rank[3][0]
    assert (ref.op, ref.seq_id, ref.record_id, ref.source) == ("all_to_all", 3, 60, "entry")


@pytest.mark.parametrize(
    ("op", "sizes", "dtypes", "expected"),
    [
        ("all_reduce", [[8], [8], [8], [8]], ["Float", "Half", "Float", "Float"], ("mismatch", [1])),
        ("broadcast", [[8], [8], [8], [9]], ["Float"] * 4, ("mismatch", [3])),
        ("_reduce_scatter_base", [[64], [64], [32], [64]], ["BFloat16"] * 4, ("mismatch", [2])),
        ("all_gather", [[8], [9], [10], [11]], ["Float"] * 4, ("none", [])),
        ("all_to_allv", [[1], [200], [3], [40]], ["Float"] * 4, ("none", [])),
        ("gather", [[5], [6], [7], [8]], ["Float"] * 4, ("none", [])),
        ("all_reduce", [[8], [8]] * 2, ["Float", "Float", "Double", "Double"], ("mismatch", [0, 1, 2, 3])),
    ],
)
def test_what_must_agree_across_ranks(
    op: str, sizes: list[list[int]], dtypes: list[str], expected: tuple[str, list[int]], redactor: Redactor, generator: Any, tmp_path: Path
) -> None:
    """All four ranks completed op #3; sizes are compared only where they must agree, dtypes always; a tie names everyone."""
    bodies = [
        generator.dump(
            generator.WORLD4, {"0": (3, 3)}, [generator.entry(7, ("0", "default_pg"), 3, op, state="completed", sizes=[s], dtype=d)]
        )
        for s, d in zip(sizes, dtypes, strict=True)
    ]
    _write(tmp_path, generator, bodies)
    verdict = analyze(load_dumps(tmp_path, redactor))
    assert (verdict.kind, verdict.initiating_ranks) == expected
