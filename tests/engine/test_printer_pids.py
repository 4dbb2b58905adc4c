"""A line that names only its printer's pid (NCCL's ``host:pid:tid [dev]``, UCX's ``[host:pid:thread]``) belongs to the
rank that pid's NCCL init line names; and a unique-id timeout inside a barrier names a late rank, not a failed init."""

from __future__ import annotations

from pathlib import Path

import pytest

from diagnose.parse.ingest import Source
from diagnose.pipeline import diagnose
from diagnose.schema import Diagnosis


def _run(tmp_path: Path, text: str) -> Diagnosis:
    path = tmp_path / "log.txt"
    path.write_text(text, encoding="utf-8")
    return diagnose([Source("log.txt", path)]).diagnosis


def _init(host: str, pid: int, rank: int, nranks: int, dev: int) -> str:
    comm = f"comm 0x55d{rank} rank {rank} nranks {nranks} cudaDev {dev} busId 1{dev}000"
    return f"{host}:{pid}:{pid + 60} [{dev}] NCCL INFO {comm} - Init COMPLETE\n"


WORLD = "".join(_init(f"node{r // 2 + 1}", 1234 + r, r, 4, r % 2) for r in range(4))
NCCL_OOM = "node2:1237:1400 [1] include/alloc.h:48 NCCL WARN Cuda failure 'out of memory'\n"
UCX_SEGV = "[node2:1236 :0:1236] Caught signal 11 (Segmentation fault: address not mapped to object at address (nil))\n"


@pytest.mark.parametrize(
    ("text", "cause", "rank"),
    [
        (WORLD + NCCL_OOM, "cuda-oom", 3),
        (WORLD + UCX_SEGV, "segfault", 2),
        (NCCL_OOM + WORLD, "cuda-oom", 3),  # the init line may come after, in another rank's output
    ],
)
def test_a_printer_pid_is_the_rank_its_nccl_init_line_names(tmp_path: Path, text: str, cause: str, rank: int) -> None:
    diagnosis = _run(tmp_path, text)
    assert (diagnosis.root_cause.id, diagnosis.initiating_rank) == (cause, rank)


def test_nccl_2_19_topology_line_names_the_printer_rank(tmp_path: Path) -> None:
    # NCCL 2.19+ init.cc "comm %p rank %d nRanks %d nNodes %d localRanks %d localRank %d MNNVL %d", without a busId
    world = "".join(
        f"node{r // 2 + 1}:{1234 + r}:{1300 + r} [{r % 2}] NCCL INFO comm 0x55d{r} rank {r} nRanks 4 nNodes 2 localRanks 2"
        f" localRank {r % 2} MNNVL 0\n"
        for r in range(4)
    )
    diagnosis = _run(tmp_path, world + NCCL_OOM)
    assert (diagnosis.root_cause.id, diagnosis.initiating_rank) == ("cuda-oom", 3)


def test_a_subgroup_communicator_does_not_number_the_world(tmp_path: Path) -> None:
    # pid 1237 prints only its tensor-parallel communicator (rank 1 of 2): that is not its global rank
    subgroup_only = "".join(_init("node1", 1234 + r, r, 4, r) for r in range(3)) + _init("node1", 1237, 1, 2, 3)
    diagnosis = _run(tmp_path, subgroup_only + NCCL_OOM.replace("node2", "node1"))
    assert diagnosis.root_cause.id == "cuda-oom"
    assert diagnosis.initiating_rank != 1


def test_a_pid_reused_on_two_hosts_names_no_rank(tmp_path: Path) -> None:
    # containers start every node's processes with the same small pids
    reused = _init("node1", 45, 0, 2, 0) + _init("node2", 45, 1, 2, 0)
    diagnosis = _run(tmp_path, reused + "node2:45:99 [0] include/alloc.h:48 NCCL WARN Cuda failure 'out of memory'\n")
    assert diagnosis.root_cause.id == "cuda-oom"
    assert diagnosis.initiating_rank is None


def test_a_rank_that_reports_its_peer_closed_the_connection_is_not_blamed(tmp_path: Path) -> None:
    text = (
        _init("node1", 500, 0, 2, 0)
        + _init("node2", 600, 1, 2, 0)
        + "srun: error: node1: task 0: Exited with exit code 1\n"
        + "node2:600:640 [0] misc/socket.cc:50 NCCL WARN socketProgress: Connection closed by remote peer node1<45074>\n"
    )
    assert _run(tmp_path, text).initiating_rank == 0


UNIQUE_ID_TIMEOUT = (
    "RuntimeError: [1] is setting up NCCL communicator and retrieving ncclUniqueId from [0] via c10d key-value store by key"
    " '0', but store->get('0') got error: Socket Timeout\n"
)
BARRIER_TRACEBACK = (
    "Traceback (most recent call last):\n"
    '  File "train.py", line 25, in main\n'
    '    with training_args.main_process_first(desc="dataset map pre-processing"):\n'
    '  File "/usr/lib/python3.10/contextlib.py", line 135, in __enter__\n'
    "    return next(self.gen)\n"
    '  File "/opt/venv/lib/python3.10/site-packages/transformers/training_args.py", line 2035, in main_process_first\n'
    "    torch.distributed.barrier()\n"
    '  File "/opt/venv/lib/python3.10/site-packages/torch/distributed/distributed_c10d.py", line 3328, in barrier\n'
    "    work = default_pg.barrier(opts=opts)\n"
)


@pytest.mark.parametrize(
    ("text", "cause"),
    [
        (BARRIER_TRACEBACK + UNIQUE_ID_TIMEOUT, "straggler-rank"),
        (UNIQUE_ID_TIMEOUT, "nccl-init-failure"),  # no barrier in sight: the communicator did not form
        (BARRIER_TRACEBACK + UNIQUE_ID_TIMEOUT.replace("Socket Timeout", "Connection reset by peer"), "nccl-init-failure"),
    ],
)
def test_a_unique_id_timeout_inside_a_barrier_names_a_late_rank_0(tmp_path: Path, text: str, cause: str) -> None:
    diagnosis = _run(tmp_path, text)
    assert (diagnosis.root_cause.id, diagnosis.initiating_rank) == (cause, 0)


STORE_WAIT_TIMEOUT = "torch.distributed.DistStoreError: wait timeout after 1800000ms, keys: /default_pg/0//barrier_1\n"


@pytest.mark.parametrize(
    ("text", "cause"),
    [
        (BARRIER_TRACEBACK + STORE_WAIT_TIMEOUT, "straggler-rank"),  # the group was made: a rank was late to the barrier
        (STORE_WAIT_TIMEOUT, "rendezvous-failure"),  # no barrier in sight: a key nobody set, a peer that never arrived
    ],
)
def test_a_store_timeout_inside_a_barrier_is_a_late_rank(tmp_path: Path, text: str, cause: str) -> None:
    assert _run(tmp_path, text).root_cause.id == cause
