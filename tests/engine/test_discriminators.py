"""Numeric discriminators, what ended the process, hangs by elimination: table-driven, through the real pipeline."""

from __future__ import annotations

from pathlib import Path

import pytest

from diagnose.engine.memory import Accounting
from diagnose.parse.ingest import Source
from diagnose.pipeline import diagnose
from diagnose.schema import Diagnosis

GIB = 2**30
MIB = 2**20
OOM = (
    "[rank{r}]: torch.OutOfMemoryError: CUDA out of memory. Tried to allocate {req}. GPU 3 has a total capacity of {cap} "
    "of which 98.00 MiB is free. Process 387746 has 78.89 GiB memory in use. Of the allocated memory 70.12 GiB is allocated "
    "by PyTorch, and {frag} is reserved by PyTorch but unallocated. If reserved but unallocated memory is large try setting "
    "PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True to avoid fragmentation."
)


def _run(tmp_path: Path, text: str, name: str = "log.txt") -> Diagnosis:
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    return diagnose([Source(name, path)]).diagnosis


@pytest.mark.parametrize(
    ("request_bytes", "capacity", "unallocated", "fragmented"),
    [
        (132 * MIB, 79.1 * GIB, 765.81 * MIB, False),  # 1 % of the card: the card is simply full
        (158 * MIB, 23.69 * GIB, 910.35 * MIB, False),  # could serve the request, but 4 % of the card: it is full
        (158 * MIB, 23.69 * GIB, 1.5 * GIB, False),  # could serve the request, but 6 % of the card: still full
        (158 * MIB, 23.69 * GIB, 3.0 * GIB, False),  # could serve the request, 13 % of the card: full, with a note
        (2.29 * GIB, 31.72 * GIB, 9.1 * GIB, False),  # 29 % of the card: still a full card
        (158 * MIB, 23.69 * GIB, 9.0 * GIB, True),  # trapped memory could serve the request, 38 % of the card
        (6.22 * GIB, 79.15 * GIB, 4.93 * GIB, False),  # trapped memory smaller than the request
        (35.6 * GIB, 79.33 * GIB, 40.69 * GIB, True),
        (158 * MIB, None, 3.0 * GIB, False),  # without the card's size no share is proven: the general case stands
    ],
)
def test_fragmentation_is_decided_from_the_numbers(
    request_bytes: float, capacity: float | None, unallocated: float, fragmented: bool
) -> None:
    assert Accounting(request_bytes, capacity, unallocated).fragmented is fragmented


@pytest.mark.parametrize(
    ("frag", "expected", "noted"),
    [
        ("765.81 MiB", "cuda-oom", True),
        ("40.00 MiB", "cuda-oom", False),
        ("9.50 GiB", "cuda-oom", True),  # 12 % of the card: full, the trapped memory a note
        ("30.00 GiB", "cuda-memory-fragmentation", False),
    ],
)
def test_minor_fragmentation_is_a_note_on_cuda_oom(tmp_path: Path, frag: str, expected: str, noted: bool) -> None:
    diagnosis = _run(tmp_path, OOM.format(r=3, req="132.00 MiB", cap="79.10 GiB", frag=frag) + "\n")
    assert diagnosis.root_cause.id == expected
    assert any(n.startswith("also: ") and "expandable_segments" in n for n in diagnosis.notes) is noted


def _overflows(scales: list[int]) -> str:
    return "".join(
        f"[2023-06-07 22:{10 + i}:00,018] [INFO] [loss_scaler.py:181:update_scale] [deepspeed] OVERFLOW! Rank 0 "
        f"Skipping step. Attempted loss scale: {s}, reducing to {s // 2}\n"
        for i, s in enumerate(scales)
    )


@pytest.mark.parametrize(
    ("scales", "expected"),
    [
        ([64, 32, 16, 8, 4], "fp16-loss-scale-collapse"),  # driven to the floor
        ([65536, 32768, 65536, 32768], "unknown"),  # the occasional skipped step of a healthy run
        ([16, 8], "unknown"),  # too few reductions to call it
        ([1], "fp16-loss-scale-collapse"),  # one line reducing below 1 (to 0): it overflows even unscaled
        ([2], "unknown"),  # one reduction to 1 is still a scale DeepSpeed allows
    ],
)
def test_loss_scale_floor(tmp_path: Path, scales: list[int], expected: str) -> None:
    assert _run(tmp_path, _overflows(scales)).root_cause.id == expected


@pytest.mark.parametrize(
    ("log2_scales", "expected"),
    [
        ([3.0, 2.0, 1.0, 0.0], "fp16-loss-scale-collapse"),  # 2**3 down to 2**0: at the floor
        ([19.0, 18.0, 19.0, 18.0], "unknown"),  # a healthy scale near its start of 2**20
    ],
)
def test_a_loss_scale_printed_as_its_logarithm_is_read_as_a_scale(tmp_path: Path, log2_scales: list[float], expected: str) -> None:
    text = "".join(f"Found NaN, decreased lg_loss_scale to {s}\n" for s in log2_scales)
    assert _run(tmp_path, text).root_cause.id == expected


def test_the_exception_that_ended_the_process_outranks_an_earlier_survived_one(tmp_path: Path) -> None:
    text = (
        'Traceback (most recent call last):\n  File "setup.py", line 3, in build\n'
        "torch._inductor.exc.InductorError: CppCompileError: C++ compile error\n"
        "falling back to eager mode\nstep 1 loss 2.31\n"
        'Traceback (most recent call last):\n  File "train.py", line 9, in <module>\n'
        + OOM.format(r=0, req="2.00 GiB", cap="79.10 GiB", frag="40.00 MiB").split("]: ", 1)[1]
        + "\n"
    )
    assert _run(tmp_path, text).root_cause.id == "cuda-oom"


def test_a_helper_command_that_failed_before_any_rank_printed_is_not_what_ended_the_run(tmp_path: Path) -> None:
    # a batch script runs `wandb login` (which cannot import), then srun starts the ranks, which fail on their own
    helper = (
        'Traceback (most recent call last):\n  File "/home/u/.local/bin/wandb", line 5, in <module>\n'
        "    from wandb.cli.cli import cli\nModuleNotFoundError: No module named 'dataclasses'\n"
    )
    ranks = "".join(
        f"{r}: [rank{r}]: AssertionError: OptimizerParamScheduler: class input value 5224464 and checkpointvalue 5224800"
        " for total number of iterations do not match\n"
        for r in range(2)
    )
    assert _run(tmp_path, helper + " 0: step 0 starting\n" + ranks).root_cause.id == "checkpoint-mismatch"
    assert _run(tmp_path, helper).root_cause.id == "import-abi-error"  # alone, it is the failure


WATCHDOG = (
    "[rank{r}]:[E1202 10:00:0{r}.000000 ProcessGroupNCCL.cpp:632] [Rank {r}] Watchdog caught collective operation "
    "timeout: WorkNCCL(SeqNum=9, OpType=ALLREDUCE, NumelIn=1, NumelOut=1, Timeout(ms)=600000) ran for 600010 "
    "milliseconds before timing out.\n"
)


BLOCKING_WAIT = (
    "[rank{r}]:[E1002 18:16:40.71175691{r} ProcessGroupNCCL.cpp:756] [Rank {r}] Work WorkNCCL(SeqNum=2521, OpType=ALLREDUCE, "
    "NumelIn=160672064, NumelOut=160672064, Timeout(ms)=600000) timed out in blocking wait.\n"
)
"""The same timeout under TORCH_NCCL_BLOCKING_WAIT=1, raised by the waiting thread (ProcessGroupNCCL.cpp)."""


@pytest.mark.parametrize("timeout", [WATCHDOG, BLOCKING_WAIT])
def test_a_rank_that_never_reports_is_found_by_elimination(tmp_path: Path, timeout: str) -> None:
    diagnosis = _run(tmp_path, "".join(timeout.format(r=r) for r in range(1, 8)))
    assert diagnosis.root_cause.id == "nccl-timeout-hang"
    assert diagnosis.initiating_rank == 0  # rank 0 is a rank, not a missing value


@pytest.mark.parametrize(
    ("launch", "rank"),
    [
        ("", None),  # two ranks of an excerpt say nothing about the rank between them
        ("WORLD_SIZE=3\n", 1),  # the launcher says there were three: rank 1 never joined
    ],
)
def test_elimination_from_two_timeouts_needs_the_launchers_world_size(tmp_path: Path, launch: str, rank: int | None) -> None:
    diagnosis = _run(tmp_path, launch + WATCHDOG.format(r=0) + WATCHDOG.format(r=2))
    assert diagnosis.root_cause.id == "nccl-timeout-hang"
    assert diagnosis.initiating_rank == rank


@pytest.mark.parametrize(
    ("launch", "rank"),
    [
        ("", None),  # no word on how many processes ran: no rank
        ("using world size: 1, data-parallel size: 1, context-parallel size: 1\n", 0),  # Megatron
        ("INFO:root:Initialized (rank/world-size) 0/1\n", 0),  # I-JEPA and its forks
        ("Initializing distributed: GLOBAL_RANK: 0, MEMBER: 1/1\n", 0),  # Lightning
        ("Initializing distributed: GLOBAL_RANK: 0, MEMBER: 1/4\n", None),  # one of four: which one failed is unsaid
    ],
)
def test_a_run_of_one_process_fails_on_rank_0(tmp_path: Path, launch: str, rank: int | None) -> None:
    oom = "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 96.00 MiB. GPU 0 has a total capacity of 39.44 GiB.\n"
    diagnosis = _run(tmp_path, launch + "Traceback (most recent call last):\n" + oom)
    assert (diagnosis.root_cause.id, diagnosis.initiating_rank) == ("cuda-oom", rank)


def test_a_launcher_blaming_rank_0_keeps_rank_0(tmp_path: Path) -> None:
    text = (
        "E0801 12:06:44.742000 18684 torch/distributed/elastic/multiprocessing/api.py:874] failed (exitcode: 1) "
        "local_rank: 0 (pid: 18758) of binary: /usr/bin/python3\n"
    )
    diagnosis = _run(tmp_path, text)
    assert (diagnosis.root_cause.id, diagnosis.initiating_rank) == ("elastic-teardown", 0)


REPORT = (
    " 0: INFO:megatron.core.utils:[2024-06-13 22:{minute:02d}:25] | MnRtt/Rnk: {fast:.2f}ms/44 | MxRtt/Rnk: {slow:.2f}ms/{rank} | "
    "MnPwr/Rnk: 556064W/37 | MxPwr/Rnk: 693584W/15 | MnTmp/Rnk: 51C/45 | MxTmp/Rnk: 86C/37 | MnEtpt/Rnk: 198.89TF/37 | "
    "MxEtpt/Rnk: 406.83TF/9"
)
TIME_LIMIT = "slurmstepd: error: *** JOB 5512093 ON dgx-h100-012 CANCELLED AT 2024-06-14T05:59:58 DUE TO TIME LIMIT ***"


def _reports(slow_ratios: list[float], rank: int = 37) -> str:
    return "\n".join(REPORT.format(minute=i, fast=4850.0, slow=4850.0 * r, rank=rank) for i, r in enumerate(slow_ratios))


@pytest.mark.parametrize(
    ("ratios", "expected", "rank"),
    [
        ([1.003] * 6, "process-preempted", None),  # healthy reports: the time limit is the answer
        ([1.003, 1.004, 2.0, 2.04], "process-preempted", None),  # slow in two reports only
        ([1.003, 1.004, 1.003, 1.9, 2.0, 2.04, 2.04], "straggler-rank", 37),  # slow report after report, after a healthy start
    ],
)
def test_a_straggler_report_names_the_slow_rank_only_when_it_stays_slow(
    tmp_path: Path, ratios: list[float], expected: str, rank: int | None
) -> None:
    _assert_named(_run(tmp_path, _reports(ratios) + "\n" + TIME_LIMIT + "\n"), expected, rank)


def _assert_named(diagnosis: Diagnosis, expected: str, rank: int | None) -> None:
    assert diagnosis.root_cause.id == expected
    if rank is not None:
        assert diagnosis.initiating_rank == rank


def test_a_straggler_before_another_failure_is_a_note_not_the_root_cause(tmp_path: Path) -> None:
    oom = OOM.format(r=5, req="2.00 GiB", cap="79.15 GiB", frag="40.00 MiB")
    diagnosis = _run(tmp_path, _reports([1.0, 2.0, 2.0, 2.1]) + "\n" + oom + "\n")
    assert diagnosis.root_cause.id == "cuda-oom"
    assert any("rank 37 was the slowest rank" in note for note in diagnosis.notes)


INPUT_TIME = (
    "[rank{rank}]: 07/22 16:{minute:02d}:03 - mmengine - INFO - Epoch(train) [1][{it}/5000]  time: {step:.4f}  data_time: {data:.4f}"
)
ALLREDUCE_TIMEOUT = (
    "[rank{rank}]:[E ProcessGroupNCCL.cpp:577] [Rank {rank}] Watchdog caught collective operation timeout: "
    "WorkNCCL(SeqNum=5298, OpType=ALLREDUCE, NumelIn=75497472, NumelOut=75497472, Timeout(ms)=600000) ran for 600170 "
    "milliseconds before timing out."
)


def _input_times(slow: dict[int, list[float]], ranks: int = 4, steps: int = 5) -> str:
    lines = []
    for step in range(steps):
        for rank in range(ranks):
            data = slow.get(rank, [0.04] * steps)[step]
            lines.append(INPUT_TIME.format(rank=rank, minute=step, it=(step + 1) * 10, step=0.4 + data, data=data))
    return "\n".join(lines)


@pytest.mark.parametrize(
    ("slow", "expected", "rank"),
    [
        ({}, "nccl-timeout-hang", None),  # every rank reads its data quickly: the hang is the answer
        ({2: [0.04, 0.05, 0.09, 0.08, 0.12]}, "nccl-timeout-hang", None),  # a few times slower, by milliseconds
        ({2: [0.04, 0.05, 30.0, 0.05, 0.04]}, "nccl-timeout-hang", None),  # one slow batch, then healthy again
        ({2: [0.05, 2.5, 8.0, 24.0, 24.0]}, "straggler-rank", 2),  # rank 2 waits on its input, the others on rank 2
    ],
)
def test_per_rank_input_times_name_a_straggler_only_when_one_rank_stays_far_slower(
    tmp_path: Path, slow: dict[int, list[float]], expected: str, rank: int | None
) -> None:
    timeouts = "\n".join(ALLREDUCE_TIMEOUT.format(rank=r) for r in (0, 1, 3))
    _assert_named(_run(tmp_path, _input_times(slow) + "\n" + timeouts + "\n"), expected, rank)


def test_an_input_straggler_before_another_failure_is_a_note(tmp_path: Path) -> None:
    oom = OOM.format(r=1, req="2.00 GiB", cap="79.15 GiB", frag="40.00 MiB")
    diagnosis = _run(tmp_path, _input_times({3: [0.05, 3.0, 6.0, 9.0, 12.0]}) + "\n" + oom + "\n")
    assert diagnosis.root_cause.id == "cuda-oom"
    assert any("rank 3 was the slowest rank" in note and "median input time" in note for note in diagnosis.notes)


def test_a_users_own_exception_before_the_timeouts_is_the_start_not_the_hang(tmp_path: Path) -> None:
    own = (
        "[rank0]: Traceback (most recent call last):\n"
        '[rank0]:   File "/workspace/train.py", line 88, in <module>\n'
        '[rank0]:     labels = batch["labels"]\n'
        "[rank0]: KeyError: 'labels'\n"
    )
    timeouts = "".join(WATCHDOG.format(r=r) for r in (1, 2, 3))
    assert _run(tmp_path, timeouts).root_cause.id == "nccl-timeout-hang"  # the timeouts alone: a hang
    diagnosis = _run(tmp_path, own + timeouts)
    assert diagnosis.is_unknown  # rank 0's KeyError, known to no entry, came first: the timeouts are its consequence
    assert diagnosis.initiating_rank == 0
    assert any("KeyError" in e.text for e in diagnosis.evidence)


ENOSPC_FROM_SEMLOCK = (
    '  File "/usr/lib/python3.10/multiprocessing/synchronize.py", line 57, in __init__\n'
    "    sl = self._semlock = _multiprocessing.SemLock(\n"
    "OSError: [Errno 28] No space left on device\n"
    "RuntimeError: DataLoader worker (pid 56811) is killed by signal: Bus error. It is possible that dataloader's "
    "workers are out of shared memory. Please try to raise your shared memory limit.\n"
)


def test_a_bare_enospc_next_to_shared_memory_exhaustion_is_shared_memory(tmp_path: Path) -> None:
    assert _run(tmp_path, ENOSPC_FROM_SEMLOCK).root_cause.id == "shm-exhausted"
    named = ENOSPC_FROM_SEMLOCK.replace("No space left on device\n", "No space left on device: '/ckpt/step_9/model.pt'\n")
    assert _run(tmp_path, named).root_cause.id == "disk-full"  # a file named: the disk it is on is full


_LOAD_FRAMES = (
    "Traceback (most recent call last):\n"
    '  File "train.py", line 159, in load_resume_state\n'
    "    state = torch.load(path, map_location='cpu')\n"
    '  File "/opt/conda/lib/python3.8/site-packages/torch/serialization.py", line 1040, in load\n'
    "    return _legacy_load(opened_file, map_location, pickle_module, **pickle_load_args)\n"
)
_PIPE_FRAMES = (
    "Traceback (most recent call last):\n"
    '  File "<string>", line 1, in <module>\n'
    '  File "C:\\Python38\\lib\\multiprocessing\\spawn.py", line 126, in _main\n'
    "    self = reduction.pickle.load(from_parent)\n"
)


@pytest.mark.parametrize(
    ("frames", "error", "expected"),
    [
        (  # an empty checkpoint, read by torch.load's legacy reader
            _LOAD_FRAMES + '  File "/opt/conda/lib/python3.8/site-packages/torch/serialization.py", line 1258, in _legacy_load\n'
            "    magic_number = pickle_module.load(f, **pickle_load_args)\n",
            "EOFError: Ran out of input",
            "checkpoint-mismatch",
        ),
        (  # a cut one, by torch 0.4's reader
            '  File "/usr/local/lib/python3.5/dist-packages/torch/serialization.py", line 420, in _load\n    result = unpickler.load()\n',
            "_pickle.UnpicklingError: pickle data was truncated",
            "checkpoint-mismatch",
        ),
        (_PIPE_FRAMES, "EOFError: Ran out of input", "unknown"),  # a spawned worker's pipe: no file at all
        (  # the user's own pickle.load of a data file: the same words, another entry's business
            'Traceback (most recent call last):\n  File "encode_folder.py", line 262, in <module>\n    w_emb = pickle.load(f)\n',
            "_pickle.UnpicklingError: pickle data was truncated",
            "unknown",
        ),
    ],
)
def test_pickle_running_out_of_data_is_a_checkpoint_only_inside_torch_load(tmp_path: Path, frames: str, error: str, expected: str) -> None:
    assert _run(tmp_path, frames + error + "\n").root_cause.id == expected
