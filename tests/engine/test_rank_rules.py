"""Which rank a failure belongs to, and which failure a process lived past: table-driven, through the real pipeline."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path

import pytest

from diagnose.parse.ingest import Source
from diagnose.parse.timestamps import parse_timestamp
from diagnose.pipeline import diagnose
from diagnose.schema import Diagnosis


def _run(tmp_path: Path, text: str) -> Diagnosis:
    path = tmp_path / "log.txt"
    path.write_text(text, encoding="utf-8")
    return diagnose([Source("log.txt", path)]).diagnosis


def _root_cause(time: str, host: str, pid: int, rank: tuple[int, int] | None) -> str:
    """torchelastic's ChildFailedError record of its first observed failure; ``rank`` (global, local), or None for a
    record cut before its rank line."""
    rank_line = f"  rank      : {rank[0]} (local_rank: {rank[1]})\n" if rank is not None else ""
    return (
        f"Root Cause (first observed failure):\n[0]:\n  time      : {time}\n  host      : {host}\n{rank_line}"
        f"  exitcode  : 1 (pid: {pid})\n" + "=" * 60 + "\n"
    )


@pytest.mark.parametrize(
    ("line", "month", "day"),
    [
        ("[rank0]:[E626 06:24:44.903881913 ProcessGroupNCCL.cpp:632] [Rank 0] Watchdog caught", 6, 26),  # c10: month unpadded
        ("[rank3]:[E1002 12:20:55.123831168 ProcessGroupNCCL.cpp:1834] [Rank 3] Timeout", 10, 2),
        ("W0204 16:43:58.892892 75 torch/distributed/run.py:793] Setting OMP_NUM_THREADS", 2, 4),  # glog: padded
    ],
)
def test_glog_and_c10_stamps_are_read(line: str, month: int, day: int) -> None:
    stamp = parse_timestamp(line)
    assert stamp is not None
    moment = datetime.fromtimestamp(stamp, tz=UTC)
    assert (moment.month, moment.day) == (month, day)


def test_a_gathered_checkpoint_traceback_belongs_to_the_rank_in_its_header(tmp_path: Path) -> None:
    text = (
        "[rank0]: torch.distributed.checkpoint.api.CheckpointException: CheckpointException ranks:dict_keys([3])\n"
        "[rank0]: Traceback (most recent call last): (RANK 3)\n"
        '[rank0]:   File "/usr/lib/python3.11/site-packages/torch/serialization.py", line 1114, in _save\n'
        "[rank0]:     zip_file.write_record(name, storage, num_bytes)\n"
        "[rank0]: OSError: [Errno 28] No space left on device\n"
    )
    diagnosis = _run(tmp_path, text)
    assert (diagnosis.root_cause.id, diagnosis.initiating_rank) == ("disk-full", 3)


def _record(index: int, rank: int, exitcode: int, traceback: str) -> str:
    return (
        f"[{index}]:\n  time      : 2026-05-17_16:10:05\n  host      : gpu-node-3\n  rank      : {rank} (local_rank: {rank})\n"
        f"  exitcode  : {exitcode} (pid: {9000 + rank})\n  error_file: <N/A>\n  traceback : {traceback}\n"
    )


def test_a_traceback_copied_into_torchelastics_report_belongs_to_its_records_rank(tmp_path: Path) -> None:
    # eight records (seven SIGTERMed victims, then the root cause whose error file holds the traceback): the root cause's
    # header falls inside the first 60 lines of the report, its rank field after them; the copied lines carry no rank
    # prefix of their own
    victims = "".join(_record(i + 1, i, -15, f"Signal 15 (SIGTERM) received by PID {9000 + i}") for i in range(7))
    copied = "Traceback (most recent call last):\n" + "".join(
        f'    File "/usr/lib/python3.12/site-packages/fla/ops/layer_{i}.py", line {i + 10}, in forward\n      y = kernel(x)\n'
        for i in range(12)
    )
    text = (
        '  File "/usr/lib/python3.12/site-packages/torch/distributed/launcher/api.py", line 317, in launch_agent\n'
        "    raise ChildFailedError(\n"
        "torch.distributed.elastic.multiprocessing.errors.ChildFailedError: \n"
        "============================================================\ntrain.py FAILED\n"
        "------------------------------------------------------------\nFailures:\n"
        + victims
        + "------------------------------------------------------------\nRoot Cause (first observed failure):\n"
        + _record(0, 7, -6, copied).replace("      y = kernel(x)\n\n", "      y = kernel(x)\n")
        + "  RuntimeError: Triton Error [CUDA]: device-side assert triggered\n"
        + "============================================================\n"
    )
    diagnosis = _run(tmp_path, text)
    assert (diagnosis.root_cause.id, diagnosis.initiating_rank) == ("cuda-device-assert", 7)


_SPAWN_HEAD = (
    "torch.multiprocessing.spawn.ProcessRaisedException: \n\n"
    "-- Process 2 terminated with the following error:\n"
    "Traceback (most recent call last):\n"
    '  File "/opt/conda/lib/python3.10/site-packages/torch/multiprocessing/spawn.py", line 69, in _wrap\n'
    "    fn(i, *args)\n"
)


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        (_SPAWN_HEAD + "torch.cuda.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB.\n", 2),
        ("torch.multiprocessing.spawn.ProcessExitedException: process 1 terminated with signal SIGKILL\n", 1),
        # the same traceback without spawn's heading names no process
        (_SPAWN_HEAD.split("\n", 3)[3] + "torch.cuda.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB.\n", None),
    ],
)
def test_torch_spawn_names_the_process_that_failed(tmp_path: Path, text: str, expected: int | None) -> None:
    diagnosis = _run(tmp_path, text)
    assert diagnosis.root_cause.id in ("cuda-oom", "host-oom-killed")
    assert diagnosis.initiating_rank == expected


def test_an_nccl_line_is_tied_to_its_rank_by_pid_not_by_cuda_device(tmp_path: Path) -> None:
    text = (
        "node1:214:515 [1] misc/shmutils.cc:113 NCCL WARN Error while creating shared memory segment /dev/shm/nccl-rk (size 9637888)\n"
        "torch.distributed.elastic.multiprocessing.errors.ChildFailedError:\n"
        "Failures:\n[2]:\n  time      : 2024-01-09_10:05:02\n  host      : node1\n  rank      : 2 (local_rank: 2)\n"
        "  exitcode  : 1 (pid: 214)\n" + _root_cause("2024-01-09_10:05:02", "node1", 212, (0, 0))
    )
    diagnosis = _run(tmp_path, text)
    assert (diagnosis.root_cause.id, diagnosis.initiating_rank) == ("shm-exhausted", 2)


def test_open_mpi_names_the_first_process_to_exit(tmp_path: Path) -> None:
    text = (
        "Primary job  terminated normally, but 1 process returned\n"
        "a non-zero exit code. Per user-direction, the job has been aborted.\n"
        "mpirun detected that one or more processes exited with non-zero status, thus causing\n"
        "the job to be terminated. The first process to do so was:\n\n"
        "  Process name: [[29973,1],4]\n  Exit code:    1\n"
    )
    diagnosis = _run(tmp_path, text)
    assert (diagnosis.root_cause.id, diagnosis.initiating_rank) == ("mpi-abort", 4)


def test_a_nan_that_names_its_rank_is_one_rank_even_when_no_other_rank_spoke(tmp_path: Path) -> None:
    text = (
        "ERROR:megatron.core.rerun_state_machine:Unexpected result nan on rank 3 at iteration #3 invocation #2 "
        "(message='found NaN in local grad norm for bucket #0 in backward pass before data-parallel communication collective')\n"
    )
    diagnosis = _run(tmp_path, text)
    assert (diagnosis.root_cause.id, diagnosis.initiating_rank) == ("nan-on-one-rank", 3)


def test_a_logged_warning_does_not_outrank_the_exception_that_ended_the_process(tmp_path: Path) -> None:
    text = (
        "[2026-06-16 23:42:02,990] [WARNING] [engine.py:1690:_configure_basic_optimizer] FusedAdam CUDA build failed "
        "(/home/u/.cache/torch_extensions/fused_adam/fused_adam.so: cannot open shared object file: No such file or directory)\n"
        "ninja: build stopped: subcommand failed.\n"
        "[rank1]: Traceback (most recent call last):\n"
        '[rank1]:   File "train.py", line 135, in main\n'
        "[rank1]:     model_engine.step()\n"
        "[rank1]: torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 1.44 GiB. GPU 1 has a total capacity of "
        "10.75 GiB of which 748.75 MiB is free. Including non-PyTorch memory, this process has 10.01 GiB memory in use\n"
    )
    diagnosis = _run(tmp_path, text)
    assert (diagnosis.root_cause.id, diagnosis.initiating_rank) == ("cuda-oom", 1)


def test_the_rank_comes_from_the_failure_that_ended_a_process_not_from_a_retried_one(tmp_path: Path) -> None:
    text = (
        "[rank5]: '(ReadTimeoutError(\"HTTPSConnectionPool(host='huggingface.co', port=443): Read timed out. (read timeout=10)\"), "
        "'(Request ID: 645c)')' thrown while requesting HEAD https://huggingface.co/datasets/glue/resolve/main/README.md\n"
        "[rank5]: Retrying in 1s [Retry 1/5].\n"
        "[rank43]: Traceback (most recent call last):\n"
        '[rank43]:   File "hf_api.py", line 3051, in get_paths_info\n'
        "[rank43]:     hf_raise_for_status(response)\n"
        "[rank43]: huggingface_hub.utils._errors.HfHubHTTPError: 429 Client Error: Too Many Requests for url: "
        "https://huggingface.co/api/datasets/glue/paths-info/main\n"
    )
    diagnosis = _run(tmp_path, text)
    assert (diagnosis.root_cause.id, diagnosis.initiating_rank) == ("hub-download-failure", 43)


def test_the_failure_report_global_rank_beats_the_agent_local_rank_for_the_same_process(tmp_path: Path) -> None:
    text = (
        "ERROR: Unexpected bus error encountered in worker. This might be caused by insufficient shared memory (shm).\n"
        "[2024-07-30 15:29:09,061] torch.distributed.elastic.multiprocessing.api: [ERROR] failed (exitcode: 1) local_rank: 1 "
        "(pid: 45) of binary: /usr/bin/python\n"
        "torch.distributed.elastic.multiprocessing.errors.ChildFailedError:\n" + _root_cause("2024-07-30_15:29:09", "worker-0", 45, (5, 1))
    )
    diagnosis = _run(tmp_path, text)
    assert (diagnosis.root_cause.id, diagnosis.initiating_rank) == ("shm-exhausted", 5)


def test_a_failure_report_cut_before_its_rank_leaves_the_agent_local_rank(tmp_path: Path) -> None:
    # the record names the pid but not its rank: the agent's line for that pid is then the only rank there is
    text = (
        "WARNING:torch.distributed.elastic.multiprocessing.api:Sending process 1235 closing signal SIGTERM\n"
        "ERROR:torch.distributed.elastic.multiprocessing.api:failed (exitcode: 1) local_rank: 3 (pid: 1238) of binary: "
        "/usr/bin/python\n"
        "torch.distributed.elastic.multiprocessing.errors.ChildFailedError:\n" + _root_cause("2023-05-01_10:00:00", "node1", 1238, None)
    )
    diagnosis = _run(tmp_path, text)
    assert (diagnosis.root_cause.id, diagnosis.initiating_rank) == ("elastic-teardown", 3)


@pytest.mark.parametrize("prefix", ["", "2025-02-04T07:30:03.123456789Z "])  # as printed, and under kubectl logs --timestamps
def test_warnings_and_retried_errors_alone_are_no_root_cause(tmp_path: Path, prefix: str) -> None:
    text = (
        "[W204 07:30:03.000000310 socket.cpp:752] [c10d] The client socket has failed to connect to [localhost]:29500 "
        "(errno: 99 - Cannot assign requested address).\n"
        + "02/04/2025 07:30:08 - INFO - __main__ - loading Qwen/Qwen2.5-7B-Instruct\n"
        * 4
        + "'(ReadTimeoutError(\"HTTPSConnectionPool(host='huggingface.co', port=443): Read timed out. (read timeout=10)\"), "
        "'(Request ID: 5d1c)')' thrown while requesting HEAD https://huggingface.co/datasets/glue/resolve/main/README.md\n"
        "Retrying in 1s [Retry 1/5].\n"
        "02/04/2025 08:54:13 - INFO - __main__ - Model weights saved in /out/model.safetensors.index.json\n"
    )
    text = "".join(prefix + line for line in text.splitlines(keepends=True))
    assert _run(tmp_path, text).root_cause.id == "unknown"


def test_a_log_that_stops_while_a_failure_is_retried_names_it_with_a_note(tmp_path: Path) -> None:
    bind = "[W socket.cpp:426] [c10d] The server socket has failed to {what} [::]:29500 (errno: 98 - Address already in use).\n"
    text = "WARNING:torch.distributed.run:\n" + (bind.format(what="bind to") + bind.format(what="listen on")) * 2 + "\n"
    diagnosis = _run(tmp_path, text)
    assert diagnosis.root_cause.id == "rendezvous-failure"
    assert any("still being retried" in note for note in diagnosis.notes)
    assert _run(tmp_path, text + "step 10 loss 2.31\n").root_cause.id == "unknown"  # the run went on: survived
    stamped = "".join("2025-02-04T07:30:03.123456789Z " + line for line in text.splitlines(keepends=True))
    assert _run(tmp_path, stamped).root_cause.id == "rendezvous-failure"  # kubectl --timestamps stamps blank lines too


@pytest.mark.parametrize("then", ["", "02/04/2025 07:41:12 - INFO - __main__ - Step 1/1000 loss=2.31\n"])
def test_the_cpp_backtrace_a_retried_error_carries_is_part_of_it(tmp_path: Path, then: str) -> None:
    # c10d's retry warning prints the error it retries on, with the backtrace c10's what() carries; the output stopping
    # inside that backtrace stops on the retry, a step after it shows the connection came back
    text = (
        "[E116 16:28:06.126274500 socket.cpp:1019] [c10d] The client socket has timed out after 600000ms while trying to "
        "connect to (127.0.0.1, 33429).\n"
        "[W116 16:28:06.135107226 TCPStore.cpp:343] [c10d] TCP client failed to connect/validate to host 127.0.0.1:33429 - "
        "retrying (try=0, timeout=600000ms, delay=60102ms): The client socket has timed out after 600000ms while trying to "
        "connect to (127.0.0.1, 33429).\n"
        "Exception raised from throwTimeoutError at /pytorch/torch/csrc/distributed/c10d/socket.cpp:1021 (most recent call first):\n"
        "frame #0: c10::Error::Error(c10::SourceLocation, std::string) + 0x98 (0x7f8d64d785e8 in /opt/torch/lib/libc10.so)\n"
        "frame #1: <unknown function> + 0x5ba8bfe (0x7f8d4d1a8bfe in /opt/torch/lib/libtorch_cpu.so)\n" + then
    )
    diagnosis = _run(tmp_path, text)
    assert diagnosis.root_cause.id == ("unknown" if then else "rendezvous-failure")
    if then:  # what the run lived past is shown as such, never as "after the root cause" when there is none
        assert [c.summary.split(";")[0] for c in diagnosis.collateral] == ["also seen: Workers could not rendezvous (3 line(s))"]


def test_the_older_desync_report_names_the_rank_that_never_joined(tmp_path: Path) -> None:
    watchdog = (
        "{r}: [E ProcessGroupNCCL.cpp:475] [Rank {r}] Watchdog caught collective operation timeout: WorkNCCL(SeqNum=1184522, "
        "OpType=ALLREDUCE, NumelIn=262144, NumelOut=262144, Timeout(ms)=1800000) ran for 1800486 milliseconds before timing out.\n"
    )
    text = "".join(watchdog.format(r=r) for r in (0, 1, 2, 3)) + (
        " 0: \t - To our best knowledge, the lagging/dead/mismatched ranks that caused the desync are:\n"
        " 0: \t     [2] finished collective #1184521, but didn't join collective #1184522 (count from 1)\n"
    )
    diagnosis = _run(tmp_path, text)
    assert (diagnosis.root_cause.id, diagnosis.initiating_rank) == ("nccl-timeout-hang", 2)


HOROVOD_STALL = (
    "[1,0]<stderr>:WARNING: One or more tensors were submitted to be reduced, gathered or broadcasted by subset of ranks "
    "and are waiting for remainder of ranks for more than 60 seconds. This may indicate that different ranks are trying to "
    "submit different tensors or that only subset of ranks is submitting tensors, which will cause deadlock. Stalled ops: "
    "HorovodBroadcast_dense_kernel_0 [ready ranks: {a}], HorovodBroadcast_dense_bias_0 [ready ranks: {b}]\n"
)


@pytest.mark.parametrize(
    ("a", "b", "then", "expected"),
    [
        ("5, 6, 3, 1, 4, 0", "5, 6, 3, 1, 4, 0", "", ("nccl-timeout-hang", 2)),  # one rank of the seven in no list
        ("0, 1, 2, 4, 5, 6", "0, 1, 3, 4, 5, 6", "", ("nccl-timeout-hang", None)),  # missing from different tensors: no one
        ("5, 6, 3, 1, 4, 0", "5, 6, 3, 1, 4, 0", "Epoch 2/10 step 1", ("straggler-rank", 2)),  # the run went on: slow, not hung
    ],
)
def test_horovods_ready_ranks_name_the_rank_that_never_submitted(
    tmp_path: Path, a: str, b: str, then: str, expected: tuple[str, int | None]
) -> None:
    steps = [f"[1,{r}]<stdout>:{step}\n" for step in ("Epoch 1/10 step 12", then) if step for r in range(7)]
    text = "".join(steps[:7]) + HOROVOD_STALL.format(a=a, b=b) + "".join(steps[7:])
    diagnosis = _run(tmp_path, text)
    assert (diagnosis.root_cause.id, diagnosis.initiating_rank) == expected


HOROVOD_MISSING = (
    "[0]<stderr>:[2020-12-29 16:50:57.724380: W horovod/common/stall_inspector.cc:105] One or more tensors were submitted to "
    "be reduced, gathered or broadcasted by subset of ranks and are waiting for remainder of ranks for more than 60 seconds. "
    "This may indicate that different ranks are trying to submit different tensors or that only subset of ranks is "
    "submitting tensors, which will cause deadlock.\n[0]<stderr>:Missing ranks:\n[0]<stderr>:0: [{a}]\n[0]<stderr>:1: [{b}]\n"
)


@pytest.mark.parametrize(
    ("a", "b", "expected"),
    [
        ("broadcast.bool.sz", "allreduce.c_d1.bias, allreduce.c_d1.weight ...", "collective-mismatch"),  # blocked apart
        ("allreduce.c_d1.bias", "allreduce.c_d1.bias", "nccl-timeout-hang"),  # both late for the same tensor: no mismatch
    ],
)
def test_horovod_ranks_missing_different_tensors_are_a_mismatch(tmp_path: Path, a: str, b: str, expected: str) -> None:
    diagnosis = _run(tmp_path, "[0]<stdout>:Epoch 1 step 12\n[1]<stdout>:Epoch 1 step 12\n" + HOROVOD_MISSING.format(a=a, b=b))
    assert diagnosis.root_cause.id == expected


DEEPSPEED_HEAD = (
    "gpu-node-a: [2024-02-19 17:00:30,000] [INFO] [launch.py:146:main] WORLD INFO DICT: {'gpu-node-a': [0, 1, 2, 3], "
    "'gpu-node-b': [0, 1, 2, 3]}\n"
    "gpu-node-a: [2024-02-19 17:00:30,000] [INFO] [launch.py:163:main] global_rank_mapping=defaultdict(<class 'list'>, "
    "{'gpu-node-a': [0, 1, 2, 3], 'gpu-node-b': [4, 5, 6, 7]})\n"
)
DEEPSPEED_OOM = (
    "gpu-node-b: torch.cuda.OutOfMemoryError: CUDA out of memory. Tried to allocate 6.22 GiB. GPU {gpu} has a total capacty of "
    "79.15 GiB of which 1.02 GiB is free. Including non-PyTorch memory, this process has 78.12 GiB memory in use.\n"
)


@pytest.mark.parametrize(("gpu", "expected"), [(2, 6), (0, 4), (9, None)])
def test_deepspeed_rank_mapping_turns_a_host_and_device_into_the_global_rank(tmp_path: Path, gpu: int, expected: int | None) -> None:
    diagnosis = _run(tmp_path, DEEPSPEED_HEAD + DEEPSPEED_OOM.format(gpu=gpu))
    assert diagnosis.root_cause.id == "cuda-oom"
    assert diagnosis.initiating_rank == expected


@pytest.mark.parametrize(("hosts", "expected"), [("{'localhost': [0, 1, 2, 3]}", 3), ("{'a': [0, 1, 2, 3], 'b': [4, 5, 6, 7]}", None)])
def test_a_line_without_a_host_prefix_is_on_the_one_host_deepspeed_mapped(tmp_path: Path, hosts: str, expected: int | None) -> None:
    """A single-node DeepSpeed launch (no pdsh, so no host prefix): the device an OOM names is that node's local rank."""
    head = f"[2026-03-11 01:21:41,055] [INFO] [launch.py:162:main] global_rank_mapping=defaultdict(<class 'list'>, {hosts})\n"
    diagnosis = _run(tmp_path, head + DEEPSPEED_OOM.format(gpu=3).removeprefix("gpu-node-b: "))
    assert (diagnosis.root_cause.id, diagnosis.initiating_rank) == ("cuda-oom", expected)


def test_without_the_launchers_mapping_a_device_index_is_no_rank(tmp_path: Path) -> None:
    diagnosis = _run(tmp_path, "gpu-node-a: some output\n" + DEEPSPEED_OOM.format(gpu=2))
    assert diagnosis.root_cause.id == "cuda-oom"
    assert diagnosis.initiating_rank is None


NCCL_INIT = (
    "{task}: {host}:850047:850323 [{dev}] NCCL INFO ncclCommInitRank comm 0x55de0e9e9672 rank {rank} nranks 16 cudaDev {dev} "
    "nvmlDev {dev} busId {bus} commId 0x64aba9f6c27799da - Init START\n"
)
XID = "1: [Sat Sep 14 04:05:52 2024] NVRM: Xid (PCI:0000:5d:00): 79, pid='<unknown>', name=<unknown>, GPU has fallen off the bus.\n"


def test_a_driver_line_naming_a_pci_bus_belongs_to_the_rank_nccl_placed_on_that_gpu(tmp_path: Path) -> None:
    """srun -l labels the node's task (1:), not the rank; NCCL's init line on that node ties bus 5d000 to rank 11."""
    init = NCCL_INIT.format(task=0, host="gpu-a16", dev=3, rank=3, bus="5d000")  # the same bus on the other node
    init += NCCL_INIT.format(task=1, host="gpu-a17", dev=2, rank=10, bus="3a000")
    init += NCCL_INIT.format(task=1, host="gpu-a17", dev=3, rank=11, bus="5d000")
    diagnosis = _run(tmp_path, init + XID)
    assert diagnosis.root_cause.id == "gpu-hardware-fault"
    assert diagnosis.initiating_rank == 11


def test_without_nccl_init_lines_a_pci_bus_proves_no_rank(tmp_path: Path) -> None:
    assert _run(tmp_path, XID).initiating_rank == 1  # only the launcher's label says anything


def test_a_download_the_hub_resumed_is_no_root_cause(tmp_path: Path) -> None:
    # huggingface_hub file_download.py logs the retry path as "Error while downloading from ...\nTrying to resume download..."
    text = (
        "Error while downloading from https://cdn-lfs.huggingface.co/repos/aa/ef/model-00001-of-00002.safetensors: "
        "HTTPSConnectionPool(host='cdn-lfs.huggingface.co', port=443): Read timed out.\n"
        "Trying to resume download...\n" + "{'loss': 1.2031, 'grad_norm': 0.61, 'learning_rate': 1.9e-05, 'epoch': 0.12}\n" * 3
    )
    assert _run(tmp_path, text).root_cause.id == "unknown"


WATCHDOG_AT = (
    "[rank{r}]:[E1202 10:00:0{r}.000000000 ProcessGroupNCCL.cpp:632] [Rank {r}] Watchdog caught collective operation "
    "timeout: WorkNCCL(SeqNum={seq}, OpType=ALLREDUCE, NumelIn=262144, NumelOut=262144, Timeout(ms)=600000) ran for "
    "600021 milliseconds before timing out.\n"
)


@pytest.mark.parametrize(
    ("seqs", "expected"),
    [({0: 11, 1: 11, 2: 10, 3: 11}, 2), ({0: 11, 1: 10, 2: 10, 3: 11}, None)],
)
def test_only_a_rank_alone_at_the_lowest_seqnum_is_behind(tmp_path: Path, seqs: dict[int, int], expected: int | None) -> None:
    """Ranks 1 and 2 both stuck at SeqNum 10 are two ranks behind, not 'rank 2 is behind'."""
    diagnosis = _run(tmp_path, "".join(WATCHDOG_AT.format(r=r, seq=seq) for r, seq in seqs.items()))
    assert (diagnosis.root_cause.id, diagnosis.initiating_rank) == ("nccl-timeout-hang", expected)


@pytest.mark.parametrize(
    "tag",
    [
        "[Rank {g}]",  # the older line names only the rank inside the group: ranks 2 and 5 are in different subgroups
        "[PG ID 11 PG GUID 11{r} Rank {g}]",  # the same group ID made by two processes: two groups, by their GUIDs
    ],
)
def test_seqnums_of_different_process_groups_are_not_compared(tmp_path: Path, tag: str) -> None:
    lines = [WATCHDOG_AT.format(r=r, seq=seq).replace(f"[Rank {r}]", tag.format(r=r, g=r % 2)) for r, seq in ((2, 216), (5, 57))]
    diagnosis = _run(tmp_path, "".join(lines))
    assert (diagnosis.root_cause.id, diagnosis.initiating_rank) == ("nccl-timeout-hang", None)


STATUS_AT = (
    "[rank{r}]:[E1015 10:00:00.000000 123 ProcessGroupNCCL.cpp:1375] [PG 0 (default_pg) Rank {r}] Exception (either an error "
    "or timeout) detected by watchdog at work: {seq}, last enqueued NCCL work: {seq}, last completed NCCL work: {done}.\n"
)


@pytest.mark.parametrize(
    ("enqueued", "expected"),
    [({0: 17, 1: 18, 2: 18, 3: 18}, 0), ({0: 17, 1: 17, 2: 18, 3: 18}, None), ({0: 18, 1: 18}, None)],
)
def test_the_one_rank_that_enqueued_less_work_is_the_one_the_others_wait_for(
    tmp_path: Path, enqueued: dict[int, int], expected: int | None
) -> None:
    """Every rank is inside a collective (enqueued > completed); rank 0 alone never enqueued the one the others wait in."""
    text = "".join(STATUS_AT.format(r=r, seq=seq, done=seq - 1) for r, seq in enqueued.items())
    diagnosis = _run(tmp_path, text)
    assert (diagnosis.root_cause.id, diagnosis.initiating_rank) == ("nccl-timeout-hang", expected)


def test_a_monitored_barrier_that_names_one_missing_rank_gives_that_rank(tmp_path: Path) -> None:
    """Rank 0 raised, but about rank 3: the rank that never reached the barrier is the one the others waited for."""
    text = (
        "[rank0]: Traceback (most recent call last):\n"
        '[rank0]:   File "train.py", line 30, in <module>\n'
        "[rank0]:     dist.monitored_barrier(timeout=timedelta(seconds=60))\n"
        "[rank0]: RuntimeError: [Rank 0]: Rank 3 failed to pass monitoredBarrier in 60000 ms\n"
    )
    diagnosis = _run(tmp_path, text)
    assert (diagnosis.root_cause.id, diagnosis.initiating_rank) == ("nccl-timeout-hang", 3)


RAY_PIDS = (75298, 75299, 8820, 8821)
RAY_WORKER_LIST = "".join(
    f"(TorchTrainer pid=71127) - (ip=10.216.70.{82 + rank // 2}, pid={pid}) world_rank={rank}, local_rank={rank % 2}, "
    f"node_rank={rank // 2}\n"
    for rank, pid in enumerate(RAY_PIDS)
)
"""The trainer's list of the workers it started."""
RAY_WORKERS_JOINED = "".join(
    f"(RayTrainWorker pid={pid}, ip=10.216.70.83) Setting up process group for: env:// [rank={rank}, world_size=4]\n"
    for rank, pid in enumerate(RAY_PIDS)
)
"""Each worker's own line as it joins the process group."""


@pytest.mark.parametrize("ranks", [RAY_WORKER_LIST, RAY_WORKERS_JOINED])
def test_ray_tags_each_line_with_its_pid_and_says_which_rank_each_pid_is(tmp_path: Path, ranks: str) -> None:
    failure = (
        "(RayTrainWorker pid=8820, ip=10.216.70.83) Traceback (most recent call last):\n"
        '(RayTrainWorker pid=8820, ip=10.216.70.83)   File "train.py", line 10, in train_func\n'
        "(RayTrainWorker pid=8820, ip=10.216.70.83) torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB. "
        "GPU 0 has a total capacity of 22.00 GiB of which 1.00 GiB is free.\n"
    )
    assert _run(tmp_path, ranks + failure).initiating_rank == 2
    assert _run(tmp_path, failure).initiating_rank is None  # without a line that says the rank, a pid is no rank


SRUN_OOM = (
    "Traceback (most recent call last):\n"
    '  File "train.py", line 10, in <module>\n'
    "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB. GPU 0 has a total capacity of 79.15 GiB of "
    "which 1.00 GiB is free.\n"
    "srun: error: gpu-node-07: task 5: Exited with exit code 1\n"
    "srun: error: gpu-node-07: tasks 0-4,6-7: Killed\n"
)


@pytest.mark.parametrize(("agent", "expected"), [("", 5), ("[INFO] torchrun nproc_per_node=8 nnodes=2\n", None)])
def test_the_srun_task_that_exited_alone_is_the_rank_when_srun_started_the_ranks(tmp_path: Path, agent: str, expected: int | None) -> None:
    """srun SIGKILLs the other tasks after one exits: that task is SLURM_PROCID, the rank, unless an agent per node
    (torchrun) started the ranks, when a task is a node."""
    diagnosis = _run(tmp_path, agent + SRUN_OOM)
    assert (diagnosis.root_cause.id, diagnosis.initiating_rank) == ("cuda-oom", expected)


def test_a_rank_waiting_for_the_nccl_id_names_the_rank_it_waited_for(tmp_path: Path) -> None:
    """Rank 2 timed out reading rank 0's ncclUniqueId: rank 0 never reached the first collective (busy preprocessing)."""
    text = (
        "[rank2]:     torch.distributed.barrier()\n"
        "[rank2]: torch.distributed.DistBackendError: [2] is setting up NCCL communicator and retrieving ncclUniqueId from [0] "
        "via c10d key-value store by key '0', but store->get('0') got error: Socket Timeout\n"
    )
    assert _run(tmp_path, text).initiating_rank == 0


def test_a_line_a_healthy_rank_prints_about_the_others_names_no_rank(tmp_path: Path) -> None:
    """SGLang's post-load barrier: the rank that prints it finished loading; the slow one is another (blames_printer)."""
    text = (
        "[rank1]: ValueError: TP rank 1 could finish the model loading, but there are other ranks that didn't finish "
        "loading. It is likely due to unexpected failures (e.g., OOM) or a slow node.\n"
    )
    diagnosis = _run(tmp_path, text)
    assert (diagnosis.root_cause.id, diagnosis.initiating_rank) == ("straggler-rank", None)


def test_the_evidence_keeps_the_pieces_of_c10ds_nccl_error_report(tmp_path: Path) -> None:
    """Pasted reports split c10d's NCCL error over lines, with blanks between: the error class and the reason count."""
    text = (
        "Unexpected error: NCCL error in: /opt/pytorch/torch/csrc/distributed/c10d/ProcessGroupNCCL.cpp:2897, invalid "
        "usage (run with NCCL_DEBUG=WARN for details)\n\n"
        "ncclInvalidUsage: This usually reflects invalid usage of NCCL library.\n\n"
        "Last error:\n\n"
        "Bootstrap : no socket interface found\n"
    )
    diagnosis = _run(tmp_path, text)
    assert diagnosis.root_cause.id == "nccl-init-failure"
    assert {3, 5, 7} <= {e.line for e in diagnosis.evidence}


SRUN_TORCHRUN_SEGFAULT = (
    "0: W0313 16:02:29.747000 542678 site-packages/torch/distributed/elastic/multiprocessing/api.py:897] Sending process "
    "542816 closing signal SIGTERM\n"
    "0: E0313 16:02:30.062000 542678 site-packages/torch/distributed/elastic/multiprocessing/api.py:869] failed "
    "(exitcode: -11) local_rank: 2 (pid: 542818) of binary: /usr/bin/python\n"
    "0: Root Cause (first observed failure):\n"
    "0: [0]:\n"
    "0:   time      : 2026-03-13_16:02:29\n"
    "0:   host      : node-a\n"
    "0:   rank      : 2 (local_rank: 2)\n"
    "0:   exitcode  : -11 (pid: 542818)\n"
    "0:   error_file: <N/A>\n"
    "0:   traceback : Signal 11 (SIGSEGV) received by PID 542818\n"
)


def test_a_line_about_a_launched_process_takes_its_rank_from_the_launcher_not_the_srun_task(tmp_path: Path) -> None:
    """srun -l's '0: ' is the task running torchrun's agent: the failed process is rank 2, as the agent reports it."""
    diagnosis = _run(tmp_path, SRUN_TORCHRUN_SEGFAULT)
    assert (diagnosis.root_cause.id, diagnosis.initiating_rank) == ("segfault", 2)


ROOT_CAUSE_BLOCK = (
    "{node}: torch.distributed.elastic.multiprocessing.errors.ChildFailedError: \n"
    "{node}: ============================================================\n"
    "{node}: train.py FAILED\n"
    "{node}: ------------------------------------------------------------\n"
    "{node}: Root Cause (first observed failure):\n"
    "{node}: [0]:\n"
    "{node}:   time      : 2025-06-01_10:00:{second}\n"
    "{node}:   host      : node-{node}\n"
    "{node}:   rank      : {rank} (local_rank: {local})\n"
    "{node}:   exitcode  : 1 (pid: 4{rank}42)\n"
    "{node}:   error_file: <N/A>\n"
    "{node}:   traceback : To enable traceback see: https://pytorch.org/docs/stable/elastic/errors.html\n"
    "{node}: ============================================================\n"
)


def test_of_two_nodes_root_cause_reports_the_earlier_failure_is_blamed(tmp_path: Path) -> None:
    """Under srun each node's agent prints its own report: the earlier failure, not the first node to flush output."""
    text = ROOT_CAUSE_BLOCK.format(node=0, second="07", rank=2, local=2) + ROOT_CAUSE_BLOCK.format(node=1, second="03", rank=5, local=1)
    assert _run(tmp_path, text).initiating_rank == 5


def _torchrun_run(rank: int, pid: int, minute: int) -> str:
    return (
        "*****************************************\n"
        "Setting OMP_NUM_THREADS environment variable for each process to be 1 in default, to avoid your system being "
        "overloaded, please further tune the variable for optimal performance in your application as needed.\n"
        "*****************************************\n"
        "step 1 loss 2.31\n"
        f"ERROR:torch.distributed.elastic.multiprocessing.api:failed (exitcode: -9) local_rank: {rank} (pid: {pid}) of binary: "
        "/usr/bin/python3.10\n"
        "torch.distributed.elastic.multiprocessing.errors.ChildFailedError:\n"
        "Root Cause (first observed failure):\n[0]:\n"
        f"  time      : 2023-08-01_01:{minute:02d}:47\n  host      : node-a\n  rank      : {rank} (local_rank: {rank})\n"
        f"  exitcode  : -9 (pid: {pid})\n  error_file: <N/A>\n"
        f"  traceback : Signal 9 (SIGKILL) received by PID {pid}\n" + "=" * 55 + "\n"
    )


def test_a_file_of_appended_runs_is_diagnosed_by_its_last_run(tmp_path: Path) -> None:
    diagnosis = _run(tmp_path, _torchrun_run(4, 208585, 6) + _torchrun_run(3, 209017, 9))
    assert diagnosis.initiating_rank == 3  # the first run's report (rank 4) ended before the second run started
    assert any("more than one run" in note for note in diagnosis.notes)
    assert all(line.line > 16 for line in diagnosis.evidence)
    banner = _torchrun_run(4, 208585, 6).split("step 1")[0]
    once = _run(tmp_path, banner + _torchrun_run(4, 208585, 6))  # two agents starting at once: one start, nothing cut
    assert once.initiating_rank == 4 and not any("more than one run" in note for note in once.notes)


def test_a_traceback_whose_first_line_names_the_rank_gives_its_exception_that_rank(tmp_path: Path) -> None:
    text = (
        "[rank: 2] Traceback (most recent call last):\n"  # a logger prefixes a record's first line only
        '  File "train.py", line 12, in <module>\n'
        "    loss.backward()\n"
        "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB. GPU 2 has a total capacity of 79.15 GiB\n"
    )
    assert _run(tmp_path, text).initiating_rank == 2


def test_text_generation_inference_names_the_shard_that_failed_to_start(tmp_path: Path) -> None:
    """TGI's launcher reports the shard (its torch.distributed rank) that failed, then stops the others."""
    text = (
        "RuntimeError: The server socket has failed to listen on any local network address. The server socket has failed "
        "to bind to [::]:29500 (errno: 98 - Address already in use).\n"
        " rank=0\n"
        "2023-10-16T06:54:28.059380Z ERROR text_generation_launcher: Shard 0 failed to start\n"
        "2023-10-16T06:54:28.059423Z  INFO text_generation_launcher: Shutting down shards\n"
        "2023-10-16T06:54:28.106837Z  INFO shard-manager: text_generation_launcher: Shard terminated rank=1\n"
    )
    diagnosis = _run(tmp_path, text)
    assert (diagnosis.root_cause.id, diagnosis.initiating_rank) == ("rendezvous-failure", 0)
    assert _run(tmp_path, text.replace("Shard 0 failed to start", "Shard 1 crashed")).initiating_rank == 1


def test_pdsh_localhost_prefix_is_peeled_so_the_ranks_traceback_ends_its_process(tmp_path: Path) -> None:
    """DeepSpeed's multi-node runner prefixes lines with the hostfile's name, often "localhost": rank 0's exception ended
    rank 0, and another process's crash the launcher reports 20 s later is its consequence."""
    text = (
        "localhost: [rank0]: Traceback (most recent call last):\n"
        'localhost: [rank0]:   File "/w/megatron/core/parallel_state.py", line 284, in initialize_model_parallel\n'
        "localhost: [rank0]:     group = torch.distributed.new_group(embedding_ranks)\n"
        "localhost: [rank0]: torch.distributed.DistBackendError: NCCL error in: /pytorch/torch/csrc/distributed/c10d/NCCLUtils.cpp:230, "
        "unhandled cuda error (run with NCCL_DEBUG=INFO for details), NCCL version 2.27.5\n"
        "localhost: [rank0]: ncclUnhandledCudaError: Call to CUDA function failed.\n"
        "localhost: [2026-03-24 13:17:05,699] [ERROR] [launch.py:341:sigkill_handler] ['/usr/bin/python3', '-u', "
        "'pretrain_gpt.py', '--local_rank=15'] exits with return code = -11\n"
    )
    diagnosis = _run(tmp_path, text)
    assert (diagnosis.root_cause.id, diagnosis.initiating_rank) == ("nccl-init-failure", 0)


def test_a_stall_report_naming_the_missing_rank_gives_the_rank_when_the_first_line_names_none(tmp_path: Path) -> None:
    """Horovod's stall inspector heads its report with a line naming no rank; the lines below name the one everyone waits for."""
    text = (
        "WARNING: One or more tensors were submitted to be reduced, gathered or broadcasted by subset of ranks and are "
        "waiting for remainder of ranks for more than 60 seconds.\n"
        "Stalled ops:\n"
        "v0/tower_0/HorovodAllreduce_v0_tower_0_gradients_AddN_37_0 [missing ranks: 815]\n"
        "v0/tower_0/HorovodAllreduce_v0_tower_0_gradients_AddN_44_0 [missing ranks: 815]\n"
    )
    assert _run(tmp_path, text).initiating_rank == 815
    two = text.replace("AddN_44_0 [missing ranks: 815]", "AddN_44_0 [missing ranks: 12]")
    assert _run(tmp_path, two).initiating_rank is None  # two ranks named: the report proves neither went first


@pytest.mark.parametrize(
    ("after", "expected"),
    [
        ("I0821 01:57:42.623394 47595311335168 tf_logging.py:115] Saving checkpoint to path /results/model.ckpt\n", "straggler-rank"),
        ("", "nccl-timeout-hang"),  # the log ends while the ranks still wait
        ("Traceback (most recent call last):\nRuntimeError: Horovod has been shut down.\n", "nccl-timeout-hang"),
    ],
)
def test_a_stall_the_run_outlives_is_a_straggler_not_a_hang(tmp_path: Path, after: str, expected: str) -> None:
    """Warnings that collectives wait for one rank, then training goes on with nothing failing: that rank was slow."""
    stall = (
        "WARNING: One or more tensors were submitted to be reduced, gathered or broadcasted by subset of ranks and are "
        "waiting for remainder of ranks for more than 60 seconds.\n"
        "Stalled ops:\n"
        "v0/tower_0/HorovodAllreduce_v0_tower_0_gradients_AddN_37_0 [missing ranks: 815]\n"
    )
    diagnosis = _run(tmp_path, stall + stall + after)
    assert (diagnosis.root_cause.id, diagnosis.initiating_rank) == (expected, 815)


def test_ddp_names_the_rank_whose_parameters_got_no_grad_without_a_launcher_prefix(tmp_path: Path) -> None:
    # torch reducer.cpp prints its own process group rank: "... did not receive grad for rank " << getRank()
    text = (
        "RuntimeError: Expected to have finished reduction in the prior iteration before starting a new one. This error indicates"
        " that your module has parameters that were not used in producing loss.\n"
        "Parameter indices which did not receive grad for rank 1: 120 121\n"
    )
    diagnosis = _run(tmp_path, text)
    assert (diagnosis.root_cause.id, diagnosis.initiating_rank) == ("ddp-unused-parameters", 1)


@pytest.mark.parametrize(("killed", "rank"), [(410127, 1), (410126, 0), (410128, 2)])
def test_deepspeeds_kill_list_names_the_local_rank_of_each_pid(tmp_path: Path, killed: int, rank: int) -> None:
    """deepspeed/launcher/launch.py kills the processes it started in local-rank order; the kernel names the one it killed."""
    text = "".join(
        f"[2025-06-02 20:51:24,182] [INFO] [launch.py:319:sigkill_handler] Killing subprocess {pid}\n" for pid in (410126, 410127, 410128)
    )
    text += f"[856341.770960] Out of memory: Killed process {killed} (python) total-vm:79905000kB, anon-rss:22957108kB, file-rss:72036kB\n"
    diagnosis = _run(tmp_path, text)
    assert diagnosis.root_cause.id == "host-oom-killed"
    assert diagnosis.initiating_rank == rank


@pytest.mark.parametrize(("killed", "rank"), [(2040953, 1), (2040954, 2)])
def test_deepspeeds_spawn_lines_name_the_local_rank_of_each_pid(tmp_path: Path, killed: int, rank: int) -> None:
    """deepspeed/launcher/launch.py says each process's pid as it spawns it, with ``--local_rank=n`` in the command; listed
    out of order here, so the order of the lines does not decide."""
    text = "".join(
        f"[2025-08-16 16:21:31,739] [INFO] [launch.py:256:main] process {pid} spawned with command: "
        f"['/usr/bin/python3', '-u', 'train.py', '--local_rank={local}', '--deepspeed', 'ds.json']\n"
        for pid, local in ((2040954, 2), (2040952, 0), (2040953, 1))
    )
    text += f"[856341.770960] Out of memory: Killed process {killed} (python3) total-vm:79905000kB, anon-rss:22957108kB, file-rss:0kB\n"
    diagnosis = _run(tmp_path, text)
    assert (diagnosis.root_cause.id, diagnosis.initiating_rank) == ("host-oom-killed", rank)


def test_a_kill_list_behind_a_node_prefix_names_no_rank_without_the_rank_mapping(tmp_path: Path) -> None:
    text = "".join(
        f"node7: [2025-06-02 20:51:24,182] [INFO] [launch.py:319:sigkill_handler] Killing subprocess {pid}\n" for pid in (11, 12)
    )
    text += "[856341.770960] Out of memory: Killed process 12 (python) total-vm:79905000kB, anon-rss:22957108kB, file-rss:72036kB\n"
    assert _run(tmp_path, text).initiating_rank is None


@pytest.mark.parametrize(
    ("signal", "cause"),
    [("9 (Killed)", "host-oom-killed"), ("11 (Segmentation fault)", "segfault"), ("6 (Aborted)", "mpi-abort")],
)
def test_mpirun_names_the_rank_that_died_and_its_signal_says_how(tmp_path: Path, signal: str, cause: str) -> None:
    """Open MPI reports the first rank that died abnormally; SIGKILL is not what mpirun sends first (the OOM killer, most
    often), SIGSEGV is a crash, SIGABRT says only that the process aborted itself."""
    text = (
        "--------------------------------------------------------------------------\n"
        f"mpirun noticed that process rank 3 with PID 48121 on node node07 exited on signal {signal}.\n"
        "--------------------------------------------------------------------------\n"
    )
    diagnosis = _run(tmp_path, text)
    assert (diagnosis.root_cause.id, diagnosis.initiating_rank) == (cause, 3)


def _allenai(time: str, host: str, local_rank: int, message: str) -> str:
    """A record of AllenAI's loggers (OLMo, OLMo-core, Dolma): ``%(asctime)s\\t%(hostname)s:%(local_rank)s\\t...``."""
    return f"2025-12-12 {time}\t{host}:{local_rank}\tolmo.util:168\tCRITICAL\t{message}\n"


_OOM = "CUDA out of memory. Tried to allocate 12.28 GiB. GPU 3 has a total capacity of 79.19 GiB of which 4.16 GiB is free."


def test_a_loggers_local_rank_column_names_the_rank_on_one_node(tmp_path: Path) -> None:
    text = (
        _allenai("16:00:00.341", "gpu-node-a", 0, "CLI environment prepared")
        + _allenai("16:00:00.342", "gpu-node-a", 3, "CLI environment prepared")
        + _allenai("16:00:32.886", "gpu-node-a", 3, f"Uncaught OutOfMemoryError: {_OOM}")
        + _allenai("16:00:38.012", "gpu-node-a", 0, f"Uncaught OutOfMemoryError: {_OOM}")
    )
    diagnosis = _run(tmp_path, text)
    assert (diagnosis.root_cause.id, diagnosis.initiating_rank) == ("cuda-oom", 3)


def test_a_loggers_local_rank_names_no_rank_when_two_nodes_log(tmp_path: Path) -> None:
    text = _allenai("16:00:32.886", "gpu-node-b", 3, f"Uncaught OutOfMemoryError: {_OOM}") + _allenai(
        "16:00:38.012", "gpu-node-a", 0, f"Uncaught OutOfMemoryError: {_OOM}"
    )
    diagnosis = _run(tmp_path, text)
    assert (diagnosis.root_cause.id, diagnosis.initiating_rank) == ("cuda-oom", None)


@pytest.mark.parametrize("stamp", ["", "2025-05-01T00:01:58.000000118Z ", "> "])  # as printed, kubectl --timestamps, quoted
def test_a_bare_exception_line_takes_the_rank_of_the_logger_record_that_repeats_it(tmp_path: Path, stamp: str) -> None:
    text = (
        "Traceback (most recent call last):\n"
        '  File "/home/user/OLMo/olmo/model.py", line 1455, in forward\n'
        "    logits = F.linear(x, self.transformer.wte.weight, None)\n"
        f"torch.OutOfMemoryError: {_OOM}\n" + _allenai("16:00:32.886", "gpu-node-a", 2, f"Uncaught OutOfMemoryError: {_OOM}")
    )
    diagnosis = _run(tmp_path, "".join(stamp + line for line in text.splitlines(keepends=True)))
    assert (diagnosis.root_cause.id, diagnosis.initiating_rank) == ("cuda-oom", 2)


def test_the_logger_record_after_a_hard_wrapped_exception_line_still_gives_its_rank(tmp_path: Path) -> None:
    # a terminal 80 columns wide: the exception line's pieces come between it and the record that repeats it
    text = (
        "Traceback (most recent call last):\n"
        '  File "/home/user/OLMo/olmo/model.py", line 1455, in forward\n'
        "    logits = F.linear(x, self.transformer.wte.weight, None)\n"
        f"torch.OutOfMemoryError: {_OOM}\n" + _allenai("16:00:32.886", "gpu-node-a", 2, f"Uncaught OutOfMemoryError: {_OOM}")
    )
    wrapped = "".join("\n".join(line[i : i + 80] for i in range(0, len(line), 80)) + "\n" for line in text.splitlines())
    diagnosis = _run(tmp_path, wrapped)
    assert any("hard-wrapped at 80 columns" in note for note in diagnosis.notes)
    assert (diagnosis.root_cause.id, diagnosis.initiating_rank) == ("cuda-oom", 2)
