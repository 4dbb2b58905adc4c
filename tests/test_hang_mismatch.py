"""Hang reasoning compares collectives only within one process group, and sizes only where they must agree."""

from __future__ import annotations

from pathlib import Path

from diagnose.pipeline import diagnose

WATCHDOG = (
    "[rank{r}]:[E1202 10:10:0{r}.000000 ProcessGroupNCCL.cpp:616] [PG ID {pg} PG GUID {pg} Rank {r}] Watchdog caught collective "
    "operation timeout: WorkNCCL(SeqNum={seq}, OpType={op}, NumelIn={n}, NumelOut={n}, Timeout(ms)=600000) ran for 600003 "
    "milliseconds before timing out."
)


def _diagnose(tmp_path: Path, rows: list[tuple[int, int, int, str, int]]) -> tuple[str, list[str]]:
    log = tmp_path / "hang.log"
    lines = [f"[rank{r}]:[I1202 10:00:00.000000 train.py:1] step 10 loss 2.0" for r in range(4)]
    lines += [WATCHDOG.format(r=r, pg=pg, seq=seq, op=op, n=n) for r, pg, seq, op, n in rows]
    log.write_text("\n".join(lines) + "\n", encoding="utf-8")
    diagnosis = diagnose([log]).diagnosis
    return diagnosis.root_cause.id, diagnosis.notes


def test_seqnums_of_different_process_groups_are_not_a_mismatch(tmp_path: Path) -> None:
    rows = [(0, 0, 120, "ALLREDUCE", 1024), (1, 0, 120, "ALLREDUCE", 1024), (2, 3, 120, "ALLGATHER", 64), (3, 3, 120, "ALLGATHER", 64)]
    root, _ = _diagnose(tmp_path, rows)
    assert root != "collective-mismatch"


def test_an_all_to_all_with_sizes_that_differ_per_rank_is_not_a_mismatch(tmp_path: Path) -> None:
    rows = [(r, 0, 77, "ALLTOALL_BASE", 1000 + 17 * r) for r in range(4)]
    root, _ = _diagnose(tmp_path, rows)
    assert root != "collective-mismatch"


def test_different_ops_at_one_seqnum_of_one_group_are_a_mismatch(tmp_path: Path) -> None:
    rows = [(0, 0, 50, "ALLREDUCE", 1024), (1, 0, 50, "ALLREDUCE", 1024), (2, 0, 50, "ALLREDUCE", 1024), (3, 0, 50, "BROADCAST", 1024)]
    root, _ = _diagnose(tmp_path, rows)
    assert root == "collective-mismatch"


def test_different_allreduce_sizes_at_one_seqnum_are_a_mismatch(tmp_path: Path) -> None:
    rows = [(0, 0, 50, "ALLREDUCE", 1024), (1, 0, 50, "ALLREDUCE", 1024), (2, 0, 50, "ALLREDUCE", 1024), (3, 0, 50, "ALLREDUCE", 2048)]
    root, _ = _diagnose(tmp_path, rows)
    assert root == "collective-mismatch"


def test_ascend_hccl_timeouts_are_read_like_nccl_ones(tmp_path: Path) -> None:
    """torch_npu's ProcessGroupHCCL prints the watchdog line with ``WorkHCCL(``: the same fields, the same reasoning."""
    log = tmp_path / "npu.log"
    lines = [f"[rank{r}]:[I324 12:30:00.000000 train.py:1] step 10 loss 2.0" for r in range(4)]
    lines += [
        f"[rank{r}]:[E324 13:00:25.428029551 compiler_depend.ts:574] [Rank {r}] Watchdog caught collective operation timeout: "
        f"WorkHCCL(SeqNum={seq}, OpType=ALLREDUCE, Timeout(ms)=1800000) ran for 1800185 milliseconds before timing out."
        for r, seq in ((0, 196), (1, 196), (2, 195), (3, 196))
    ]
    log.write_text("\n".join(lines) + "\n", encoding="utf-8")
    diagnosis = diagnose([log]).diagnosis
    assert diagnosis.root_cause.id == "nccl-timeout-hang"
    assert diagnosis.initiating_rank == 2
    assert any("rank 2 is behind on SeqNum" in note for note in diagnosis.notes)
