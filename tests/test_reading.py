"""Reading real log formats: ranks, hosts, timestamps, events, roles, and the first failure.

Fixtures in tests/fixtures/logs are written in the formats the launchers print; the table says
what each must yield. Multi-rank ones put the root cause on a rank other than 0, with and
without timestamps.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from diagnose.parse.ingest import resolve_sources
from diagnose.pipeline import Result, diagnose
from diagnose.settings import load_settings

FIXTURES = Path(__file__).parent / "fixtures" / "logs"

# (fixture, root cause, initiating rank)
DIAGNOSES = [
    ("torchrun-oom-64ranks.log", "cuda-oom", 37),
    ("torchrun-oom-64ranks-nots.log", "cuda-oom", 37),
    ("torchrun-hang-straggler.log", "nccl-timeout-hang", 6),
    ("torchrun-hang-straggler-nots.log", "nccl-timeout-hang", 6),
    ("nan-first-on-rank3.log", "nan-on-one-rank", 3),
    ("nan-first-on-rank3-nots.log", "nan-on-one-rank", 3),
    ("xid79", "gpu-hardware-fault", 10),
    ("xid79-nots", "gpu-hardware-fault", 10),
    ("victim-named-first.log", "data-corruption", 2),
    ("victim-named-first-ts.log", "data-corruption", 2),
    ("slurm-label.out", "cuda-illegal-memory-access", 3),
    ("deepspeed-pdsh.log", "cuda-oom", 3),
    ("lightning.log", "device-mismatch", 1),
    ("accelerate.log", "cuda-device-assert", 1),
    ("mpi.log", "nccl-network-failure", 5),
    ("k8s", "shm-exhausted", 1),
    ("plain-single.log", "checkpoint-mismatch", None),
]


def run(name: str) -> Result:
    return diagnose(resolve_sources([str(FIXTURES / name)]), settings=load_settings())


@pytest.mark.parametrize(("name", "root", "rank"), DIAGNOSES)
def test_root_cause_and_initiating_rank(name: str, root: str, rank: int | None) -> None:
    diagnosis = run(name).diagnosis
    assert (diagnosis.root_cause.id, diagnosis.initiating_rank) == (root, rank)


# (fixture, ranks seen, event kinds that must be present)
READING = [
    ("torchrun-oom-64ranks.log", set(range(64)), {"traceback", "watchdog", "agent_failed"}),
    ("torchrun-hang-straggler.log", set(range(8)), {"watchdog", "watchdog_status"}),
    ("slurm-label.out", {0, 1, 2, 3}, {"error_line"}),
    ("deepspeed-pdsh.log", {3}, {"traceback"}),
    ("lightning.log", {0, 1}, {"traceback"}),
    ("mpi.log", {0, 2, 5}, {"error_line"}),
    ("k8s", {0, 1, 2}, {"watchdog"}),
]


@pytest.mark.parametrize(("name", "ranks", "kinds"), READING)
def test_ranks_and_events_are_read(name: str, ranks: set[int], kinds: set[str]) -> None:
    log = run(name).log
    assert ranks <= set(log.ranks)
    assert kinds <= {event.kind for event in log.events}


def test_traceback_is_one_event_with_type_message_and_frames() -> None:
    log = run("torchrun-oom-64ranks.log").log
    tracebacks = [e for e in log.events if e.kind == "traceback" and e.rank == 37]
    assert len(tracebacks) == 1
    event = tracebacks[0]
    assert event.exception_type == "torch.OutOfMemoryError"
    assert event.message.startswith("CUDA out of memory")
    assert "train (pretrain.py:377)" in event.fields["frames"]
    assert event.role == "initiating"
    assert len(event.lines) == 6


def test_watchdog_fields_and_roles() -> None:
    log = run("torchrun-oom-64ranks.log").log
    watchdog = next(e for e in log.events if e.kind == "watchdog")
    assert watchdog.fields["SeqNum"] == "88213" and watchdog.fields["OpType"] == "ALLREDUCE"
    assert watchdog.fields["Timeout(ms)"] == "600000" and watchdog.fields["NumelIn"] == "262144"
    assert watchdog.role == "cascade"
    assert all(e.role == "teardown" for e in log.events if e.kind == "agent_failed")


def test_timestamps_are_read_in_order() -> None:
    log = run("torchrun-oom-64ranks.log").log
    oom = next(f for f in log.findings if f.entry_id == "cuda-oom")
    timeout = next(e for e in log.events if e.kind == "watchdog")
    assert oom.timestamp is not None and timeout.timestamp is not None
    assert oom.timestamp < timeout.timestamp
    assert all(f.timestamp is None for f in run("torchrun-oom-64ranks-nots.log").log.findings if f.entry_id == "nccl-timeout-hang")


def test_63_timeouts_are_one_collateral_item() -> None:
    diagnosis = run("torchrun-oom-64ranks.log").diagnosis
    group = next(c for c in diagnosis.collateral if c.id == "nccl-timeout-hang")
    assert len(group.ranks) == 63 and 37 not in group.ranks
    assert "63 rank(s) timed out in ALLREDUCE SeqNum 88213" in group.summary


def test_first_observed_failure_is_only_a_hint() -> None:
    result = run("victim-named-first.log")
    named = [r for r in result.log.failure_records if r["root_cause"] == "yes"]
    assert named[0]["rank"] == "0"
    assert result.diagnosis.initiating_rank == 2


def test_hang_reasoning_is_explained() -> None:
    diagnosis = run("torchrun-hang-straggler.log").diagnosis
    assert any("never entered the collective" in note for note in diagnosis.notes)


def test_hosts_are_read_from_prefixes_and_kernel_lines() -> None:
    result = run("xid79")
    hosts = result.log.hosts
    assert hosts[10] == hosts[8] != hosts[0]
    assert result.diagnosis.initiating_host == hosts[10]


def test_file_names_are_masked_when_they_name_hosts_or_pods() -> None:
    from diagnose.parse.sources import hints, masked_name
    from redaction import Redactor

    redactor = Redactor()
    assert masked_name("multi-rank-oom.log", redactor) == "multi-rank-oom.log"
    assert masked_name("rank_03.log", redactor) == "rank_03.log"
    assert masked_name("1/rank.5/stderr", redactor) == "1/rank.5/stderr"
    assert masked_name("detr-coco-r101-master-0.log", redactor).startswith("<HOST_")
    node = masked_name("gpu-node-07/stderr.log", redactor)
    assert node.startswith("<HOST_") and node.endswith("/stderr.log")
    assert hints("1/rank.5/stderr", redactor, has_master=False) == (5, None)
    assert hints("llm-worker-2.log", redactor, has_master=True)[0] == 3
    # torchrun --log-dir: <run id>/attempt_0/<local rank>/stderr.log; the run id names no host
    assert hints("logs/none_8v0k1a2b/attempt_0/3/stderr.log", redactor, has_master=False) == (3, None)
    assert masked_name("logs/run/attempt_0/3/stderr.log", redactor) == "logs/run/attempt_0/3/stderr.log"


def test_interleaved_partial_line_belongs_to_the_rank_whose_prefix_precedes_the_error(tmp_path: Path) -> None:
    lines = [f"[rank{r}]: step 10 loss 2.31" for r in range(8)]
    lines.append("[rank1]: step 11 loss 2.3[rank4]: torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB.")
    path = tmp_path / "interleaved.log"
    path.write_text("\n".join(lines) + "\n")
    diagnosis = diagnose(resolve_sources([str(path)]), settings=load_settings()).diagnosis
    assert (diagnosis.root_cause.id, diagnosis.initiating_rank) == ("cuda-oom", 4)


# torch 1.9-1.10 errors/__init__.py _MSG_FORMAT_TEMPLATE: "Root Cause:" then the root record, "Other Failures:" after it
TORCH_1_9_REPORT = (
    "***************************************\n"
    "            train.py FAILED            \n"
    "=======================================\n"
    "Root Cause:\n"
    "[0]:\n"
    "  time: 2021-08-01_12:00:00\n"
    "  rank: 2 (local_rank: 2)\n"
    "  exitcode: 1 (pid: 123)\n"
    "  error_file: <N/A>\n"
    '  msg: "Process failed with exitcode 1"\n'
    "=======================================\n"
    "Other Failures:\n"
    "[1]:\n"
    "  time: 2021-08-01_12:00:01\n"
    "  rank: 0 (local_rank: 0)\n"
    "  exitcode: 1 (pid: 120)\n"
    "  error_file: <N/A>\n"
    '  msg: "Process failed with exitcode 1"\n'
    "***************************************\n"
)


@pytest.mark.parametrize("head", ["torch.distributed.elastic.multiprocessing.errors.ChildFailedError: \n", ""])
def test_torch_1_9_failure_report_names_its_root_cause_first(tmp_path: Path, head: str) -> None:
    """Read from its ChildFailedError line, or from its own "Root Cause:" when the paste starts below that line."""
    path = tmp_path / "log.txt"
    path.write_text(head + TORCH_1_9_REPORT, encoding="utf-8")
    result = diagnose(resolve_sources([str(path)]))
    records = result.log.failure_records
    assert [(r["rank"], r["root_cause"], r["pid"]) for r in records] == [("2", "yes", "123"), ("0", "no", "120")]
    assert result.diagnosis.initiating_rank == 2


def test_the_launchers_report_never_displaces_the_workers_last_traceback(tmp_path: Path) -> None:
    """Unprefixed output of many launches: only the first few and the latest tracebacks of a rank are kept, and the
    latest worker's (what the last run died of) must not give its place to torchrun's ChildFailedError after it."""
    worker = (
        "Traceback (most recent call last):\n"
        '  File "train.py", line 452, in <module>\n'
        "    model.load_state_dict(torch.load(path, map_location='cpu'))\n"
        "FileNotFoundError: [Errno 2] No such file or directory: '../model/model_current.pt'\n"
    )
    launcher = (
        "ERROR:torch.distributed.elastic.multiprocessing.api:failed (exitcode: 1) local_rank: 0 (pid: 4175047) of binary: python\n"
        "Traceback (most recent call last):\n"
        '  File "torch/distributed/run.py", line 752, in run\n'
        "    )(*cmd_args)\n"
        "torch.distributed.elastic.multiprocessing.errors.ChildFailedError: \n"
    )
    path = tmp_path / "nohup.out"
    path.write_text((worker * 2 + launcher) * 6, encoding="utf-8")
    result = diagnose([path], settings=load_settings(retrieval=False))
    last_worker = max(i for i, text in enumerate(path.read_text().split("\n"), 1) if text.startswith("FileNotFoundError"))
    assert last_worker in {e.anchor.line for e in result.log.events if e.kind == "traceback"}
    assert result.diagnosis.root_cause.id == "unknown", "the worker's own exception leads, not the launcher's teardown"
