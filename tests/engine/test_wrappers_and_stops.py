"""A wrapper exception yields to the error it wraps; a person's stop explains the kill lines after it; a teardown
that reports no failure names nothing. Through the real pipeline, on the libraries' own wordings."""

from __future__ import annotations

from pathlib import Path

import pytest

from diagnose.engine.chains import exceptions
from diagnose.parse.ingest import Source
from diagnose.pipeline import Result, diagnose
from diagnose.schema import Diagnosis

# torch._dynamo wraps the backend's exception: ``raise BackendCompilerFailed(self.compiler_fn, e) from e`` and its
# message is "backend='inductor' raised:\n{type}: {message}" (pytorch/pytorch#118449, a V100 run).
BF16_UNDER_DYNAMO = """Traceback (most recent call last):
  File "/opt/pytorch/pytorch/torch/_dynamo/output_graph.py", line 1097, in call_user_compiler
    compiled_fn = compiler_fn(gm, self.example_inputs())
  File "/opt/pytorch/pytorch/torch/_inductor/codecache.py", line 1204, in load
    raise RuntimeError(f"Internal Triton PTX codegen error: \\n{e.stderr.decode()}")
torch._dynamo.exc.BackendCompilerFailed: backend='inductor' raised:
RuntimeError: Internal Triton PTX codegen error:
ptxas /tmp/compile-ptx-src-83b319, line 51; error   : Feature '.bf16' requires .target sm_80 or higher
ptxas /tmp/compile-ptx-src-83b319, line 51; error   : Feature 'cvt with .f32.bf16' requires .target sm_80 or higher
ptxas /tmp/compile-ptx-src-83b319, line 59; error   : Feature '.bf16' requires .target sm_80 or higher
ptxas fatal   : Ptx assembly aborted due to errors
Set TORCH_LOGS="+dynamo" and TORCHDYNAMO_VERBOSE=1 for more information

You can suppress this exception and fall back to eager by setting:
    import torch._dynamo
    torch._dynamo.config.suppress_errors = True
"""

OOM = (
    "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB. GPU 0 has a total capacity of 79.15 GiB "
    "of which 1.21 GiB is free."
)
# ``raise ... from e`` prints the cause's traceback first, then the wrapper's: the first link is where it started.
OOM_UNDER_DYNAMO_CHAINED = f"""Traceback (most recent call last):
  File "/usr/lib/python3.10/site-packages/torch/_dynamo/output_graph.py", line 1446, in _call_user_compiler
    compiled_fn = compiler_fn(gm, self.example_inputs())
  File "/usr/lib/python3.10/site-packages/torch/_inductor/compile_fx.py", line 1100, in compile_fx
    return aot_autograd(
{OOM}

The above exception was the direct cause of the following exception:

Traceback (most recent call last):
  File "/workspace/train.py", line 88, in <module>
    loss = model(batch).loss
  File "/usr/lib/python3.10/site-packages/torch/_dynamo/output_graph.py", line 1465, in _call_user_compiler
    raise BackendCompilerFailed(self.compiler_fn, e) from e
torch._dynamo.exc.BackendCompilerFailed: backend='inductor' raised:
OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB. GPU 0 has a total capacity of 79.15 GiB of which 1.21 GiB is free.

Set TORCH_LOGS="+dynamo" and TORCHDYNAMO_VERBOSE=1 for more information
"""

# torch.utils.data re-raises a worker's exception as "Caught X in DataLoader worker process N." followed by
# "Original Traceback (most recent call last):" and the worker's own traceback (torch/_utils.py ExceptionWrapper).
DATALOADER_WRAPPED = """Traceback (most recent call last):
  File "/workspace/train.py", line 120, in <module>
    for batch in loader:
  File "/usr/local/lib/python3.10/dist-packages/torch/_utils.py", line 705, in reraise
    raise exception
OSError: Caught OSError in DataLoader worker process 3.
Original Traceback (most recent call last):
  File "/usr/local/lib/python3.10/dist-packages/torch/utils/data/_utils/worker.py", line 308, in _worker_loop
    data = fetcher.fetch(index)
  File "/workspace/dataset.py", line 41, in __getitem__
    np.save(cache_path, arr)
OSError: [Errno 28] No space left on device

"""

# ProcessGroupNCCL's message: "NCCL error in: ..., unhandled cuda error ..., NCCL version ..." then the interpretation
# ("ncclUnhandledCudaError: Call to CUDA function failed.") and "\nLast error:\n" + ncclGetLastError().
NCCL_WRAPPED = (
    "[rank1]: Traceback (most recent call last):\n"
    '[rank1]:   File "/workspace/train.py", line 30, in <module>\n'
    "[rank1]:     model = DDP(model, device_ids=[local_rank])\n"
    "[rank1]: torch.distributed.DistBackendError: NCCL error in: ../torch/csrc/distributed/c10d/NCCLUtils.hpp:317, "
    "unhandled cuda error (run with NCCL_DEBUG=INFO for details), NCCL version 2.21.5\n"
    "[rank1]: ncclUnhandledCudaError: Call to CUDA function failed.\n"
    "[rank1]: Last error:\n"
    "[rank1]: Cuda failure 'out of memory'\n"
)

# torchrun on Ctrl-C (a public training log): the agent forwards SIGINT, kills what does not stop within the grace period.
AGENT = "torch/distributed/elastic"
CTRL_C = (
    "step 11801 | train_loss 3.49  | norm 0.30  | time 2058.30 ms | tok/sec 254.72K\n"
    "step 11802 | train_loss 3.62  | norm 0.31  | time 2227.09 ms | tok/sec 235.41K\n"
    f"^CW0817 02:40:09.307000 17860 {AGENT}/agent/server/api.py:719] Received 2 death signal, shutting down workers\n"
    f"W0817 02:40:09.311000 17860 {AGENT}/multiprocessing/api.py:900] Sending process 17942 closing signal SIGINT\n"
    f"W0817 02:40:09.312000 17860 {AGENT}/multiprocessing/api.py:900] Sending process 17943 closing signal SIGINT\n"
    f"W0817 02:40:39.314000 17860 {AGENT}/multiprocessing/api.py:919] Unable to shutdown process 17943 via 2, forcefully exiting via 9\n"
)
AGENT_SIGNALLED = (
    "Traceback (most recent call last):\n"
    f'  File "/workspace/GPT/.venv/lib/python3.13/site-packages/{AGENT}/multiprocessing/api.py", line 84, in _terminate_process_handler\n'
    '    raise SignalException(f"Process {os.getpid()} got signal: {sigval}", sigval=sigval)\n'
    "torch.distributed.elastic.multiprocessing.api.SignalException: Process 17860 got signal: 2\n"
)
WORKER_KILLED = "RuntimeError: DataLoader worker (pid 17990) is killed by signal: Killed.\n"
SEGFAULT_IN_WORKER = "ERROR: Unexpected segmentation fault encountered in worker.\n"
INPLACE = (
    "RuntimeError: one of the variables needed for gradient computation has been modified by an inplace operation: "
    "[torch.cuda.FloatTensor [16, 512]], which is output 0 of ReluBackward0, is at version 2; expected version 1 instead.\n"
)

SLURM_CANCELLED = "slurmstepd: error: *** JOB 760737 ON gpu-node-07 CANCELLED AT 2025-08-16T16:27:59 ***\n"
TRAINING = "".join(f"{{'loss': {4.6 + i / 100:.2f}, 'learning_rate': 1e-05, 'epoch': 0.{i}}}\n" for i in range(5))


def _run(tmp_path: Path, text: str, name: str = "log.txt") -> Diagnosis:
    return _result(tmp_path, {name: text}).diagnosis


def _result(tmp_path: Path, files: dict[str, str]) -> Result:
    sources = []
    for name, text in files.items():
        path = tmp_path / name
        path.write_text(text, encoding="utf-8")
        sources.append(Source(name, path))
    return diagnose(sources)


@pytest.mark.parametrize(
    ("text", "cause", "wrapper"),
    [
        (BF16_UNDER_DYNAMO, "bf16-unsupported", "compile-failure"),  # the wrapped message on the next lines
        (OOM_UNDER_DYNAMO_CHAINED, "cuda-oom", "compile-failure"),  # the cause's own traceback, chained
        (DATALOADER_WRAPPED, "disk-full", "data-corruption"),  # the worker's original traceback, nested
        (NCCL_WRAPPED, "cuda-oom", "nccl-init-failure"),  # NCCL's "Last error:"
    ],
)
def test_a_wrapper_yields_to_the_error_it_wraps(tmp_path: Path, text: str, cause: str, wrapper: str) -> None:
    diagnosis = _run(tmp_path, text)
    assert diagnosis.root_cause.id == cause
    assert wrapper in [c.id for c in diagnosis.candidates[1:]]


def test_the_wrapper_line_is_cited_with_the_wrapped_error(tmp_path: Path) -> None:
    diagnosis = _run(tmp_path, BF16_UNDER_DYNAMO)
    texts = [e.text for e in diagnosis.evidence]
    assert any("BackendCompilerFailed" in t for t in texts) and any("requires .target sm_80" in t for t in texts)


def test_a_weak_line_inside_a_specific_wrapper_does_not_take_over(tmp_path: Path) -> None:
    # "unspecified launch failure" is generic (weight 0.3): the wrapper stays the more specific account
    text = (
        "Traceback (most recent call last):\n"
        '  File "/workspace/train.py", line 88, in <module>\n'
        "    loss = model(batch).loss\n"
        "torch._dynamo.exc.BackendCompilerFailed: backend='inductor' raised:\n"
        "RuntimeError: CUDA error: unspecified launch failure\n"
    )
    assert _run(tmp_path, text).root_cause.id == "compile-failure"


# Ray Tune 0.7 on Python 3.5 (a committed LSF stderr): RayTaskError carries the trial's own traceback after its line, and
# TuneError reports the failed trials; a numpy import warning the run lived past came first
NUMPY_WARNING = (
    "/usr/lib/python3.5/importlib/_bootstrap.py:222: RuntimeWarning: numpy.dtype size changed, may indicate binary incompatibility.\n"
)
RAY_TUNE_TRIAL_FAILED = (
    NUMPY_WARNING
    + """2019-10-31 16:25:02,267	ERROR trial_runner.py:569 -- Error processing event.
Traceback (most recent call last):
  File "/usr/local/lib/python3.5/dist-packages/ray/tune/trial_runner.py", line 515, in _process_trial
    result = self.trial_executor.fetch_result(trial)
  File "/usr/local/lib/python3.5/dist-packages/ray/worker.py", line 2121, in get
    raise value.as_instanceof_cause()
ray.exceptions.RayTaskError(OSError): ray_Train:train() (pid=45173, host=gpu06)
  File "/usr/local/lib/python3.5/dist-packages/ray/tune/trainable.py", line 176, in train
    result = self._train()
  File "/usr/local/lib/python3.5/dist-packages/torch/serialization.py", line 147, in _with_file_like
    f.close()
OSError: [Errno 122] Disk quota exceeded
Traceback (most recent call last):
  File "ray_pipeline.py", line 691, in <module>
  File "/usr/local/lib/python3.5/dist-packages/ray/tune/tune.py", line 269, in run
    raise TuneError("Trials did not complete", errored_trials)
ray.tune.error.TuneError: ('Trials did not complete', [Train_0])
"""
)


def test_a_ray_task_error_carries_the_remote_exception_that_ended_the_run(tmp_path: Path) -> None:
    """The remote traceback after ``RayTaskError(...)`` is its message, and Tune's report of the failed trials is a
    launcher's report: the trial's exception ended the run, not the warning before it."""
    [trial] = [r for r in exceptions(_result(tmp_path, {"ray.log": RAY_TUNE_TRIAL_FAILED}).log)[("ray.log", None)] if r.first == 3]
    assert trial.last == 13 and trial.wraps == {8: (9, 13)}
    assert _run(tmp_path, RAY_TUNE_TRIAL_FAILED).root_cause.id == "disk-full"


def test_the_shapes_of_one_exception(tmp_path: Path) -> None:
    trailing = "srun: error: gpu-node-07: task 0: Out Of Memory\n"  # the next output, not the exception's message
    plain = "Traceback (most recent call last):\n" + INPLACE + trailing
    [chain], [loader], [alone] = (
        exceptions(_result(tmp_path, {name: text}).log)[(name, None)]
        for name, text in (("chain.log", OOM_UNDER_DYNAMO_CHAINED), ("loader.log", DATALOADER_WRAPPED), ("plain.log", plain))
    )
    assert len(chain.events) == 2 and list(chain.wraps) == [15]  # the chained tracebacks; "raised:" continues, the OOM line does not
    assert len(loader.events) == 2 and list(loader.wraps) == [6]  # "Caught ... in DataLoader worker" and the nested traceback
    assert loader.last == 12
    assert alone.wraps == {} and alone.last == 2  # the srun line after the exception is not its message


@pytest.mark.parametrize(
    "after",
    [
        WORKER_KILLED,  # a DataLoader worker SIGKILLed in the teardown (host-oom-killed's generic line)
        "Killed\n",  # the shell's report of the SIGKILL
        SEGFAULT_IN_WORKER,  # a worker crashing on the way down
    ],
)
def test_a_person_stop_explains_the_kill_lines_after_it(tmp_path: Path, after: str) -> None:
    diagnosis = _run(tmp_path, CTRL_C + after + AGENT_SIGNALLED)
    assert diagnosis.root_cause.id == "user-interrupt"  # how the run ended; no kill line after it is a candidate
    assert [c.id for c in diagnosis.candidates] == ["user-interrupt"]
    assert diagnosis.initiating_rank is None  # a person is not a rank
    assert any(n.startswith("stopped by a person (log.txt:3)") for n in diagnosis.notes)


def test_an_unknown_error_before_the_stop_is_not_explained_by_it(tmp_path: Path) -> None:
    failed = "[rank1]: ValueError: the batch sampler returned an empty batch\n"
    diagnosis = _run(tmp_path, failed + CTRL_C + AGENT_SIGNALLED)
    assert diagnosis.is_unknown  # the run may have been failing before the person stopped it


def test_a_failure_before_the_stop_is_still_the_root_cause(tmp_path: Path) -> None:
    diagnosis = _run(tmp_path, OOM + "\n" + CTRL_C + WORKER_KILLED + AGENT_SIGNALLED)
    assert diagnosis.root_cause.id == "cuda-oom"


@pytest.mark.parametrize(
    ("before", "expected"),
    [
        ("Train Epoch: 1 [2560/60000 (4%)]\tLoss: 2.295015\n", "user-interrupt"),  # the terminal's echo of Ctrl-C stopped it
        ("ssh: connect to host node2 port 22: Connection refused\n", "ssh-launch-failure"),  # stopped after it had failed
    ],
)
def test_a_terminals_echoed_ctrl_c_is_a_persons_stop(tmp_path: Path, before: str, expected: str) -> None:
    assert _run(tmp_path, before + "^C\n").root_cause.id == expected


def test_a_failure_named_exactly_after_the_stop_is_not_its_consequence(tmp_path: Path) -> None:
    # an interrupted run, then the next run in the same file fails on its own
    text = 'Traceback (most recent call last):\n  File "train.py", line 9, in <module>\nKeyboardInterrupt\n' + TRAINING + INPLACE
    assert _run(tmp_path, text).root_cause.id == "inplace-autograd-error"


def test_only_the_same_file_or_the_clock_proves_after_the_stop(tmp_path: Path) -> None:
    stop = "[rank0]: KeyboardInterrupt\n"
    untimed = _result(tmp_path, {"rank0.log": stop, "rank1.log": f"[rank1]: {WORKER_KILLED}"}).diagnosis
    assert untimed.root_cause.id == "host-oom-killed"  # per-rank files without clocks: no order between them
    timed = _result(
        tmp_path,
        {
            "rank0.log": f"2025-08-17T02:40:09.307Z {stop}",
            "rank1.log": f"2025-08-17T02:40:45.100Z [rank1]: {WORKER_KILLED}",
        },
    ).diagnosis
    assert timed.root_cause.id == "user-interrupt"  # the kill came 36 s after the stop: its consequence


def test_a_job_cancelled_with_no_reason_is_a_persons_stop(tmp_path: Path) -> None:
    """slurmstepd prints a JOB's cancel without a reason only for a signal sent to the job (an scancel): a person's
    stop, with no rank; time limits, preemption and node failures say DUE TO."""
    diagnosis = _run(tmp_path, TRAINING + SLURM_CANCELLED)
    assert (diagnosis.root_cause.id, diagnosis.initiating_rank) == ("user-interrupt", None)


def test_slurms_own_lines_for_the_same_cancel_are_the_stop(tmp_path: Path) -> None:
    """scancel makes srun say its step is aborted and slurmstepd print the step's cancel, at the job's instant, before
    the job's own line: the same stop, not a teardown that began first. A step cancelled at another instant is not."""
    same = (
        "srun: Job step aborted: Waiting up to 62 seconds for job step to finish.\n"
        "slurmstepd: error: *** STEP 760737.0 ON gpu-node-07 CANCELLED AT 2025-08-16T16:27:59 ***\n"
    )
    diagnosis = _run(tmp_path, TRAINING + same + SLURM_CANCELLED)
    assert (diagnosis.root_cause.id, diagnosis.initiating_rank) == ("user-interrupt", None)
    earlier = "slurmstepd: error: *** STEP 760737.0 ON gpu-node-07 CANCELLED AT 2025-08-16T16:20:03 ***\n"
    assert _run(tmp_path, TRAINING + earlier + SLURM_CANCELLED).root_cause.id != "user-interrupt"


def test_a_step_cancelled_with_no_reason_alone_reports_no_failure(tmp_path: Path) -> None:
    """A STEP's reasonless cancel is also srun's own kill after a task failed: alone it names nothing."""
    step = "slurmstepd: error: *** STEP 760737.0 ON gpu-node-07 CANCELLED AT 2025-08-16T16:27:59 ***\n"
    diagnosis = _run(tmp_path, TRAINING + step)
    assert diagnosis.is_unknown and diagnosis.candidates == []
    assert any(c.id == "elastic-teardown" for c in diagnosis.collateral)  # still explained as collateral


@pytest.mark.parametrize(
    "failure",
    [
        "E0813 22:08:40.112000 2585 torch/distributed/elastic/multiprocessing/api.py:869] failed (exitcode: 1) "
        "local_rank: 0 (pid: 3248030) of binary: /usr/bin/python\n",  # the launcher saw a worker fail
        "W0813 22:08:39.776000 2585 torch/distributed/elastic/multiprocessing/api.py:898] Sending process 2711 closing "
        "signal SIGTERM\n",  # a line specific enough on its own
    ],
)
def test_a_teardown_that_reports_a_failure_is_still_named(tmp_path: Path, failure: str) -> None:
    diagnosis = _run(tmp_path, TRAINING + failure + SLURM_CANCELLED)
    assert diagnosis.root_cause.id == "elastic-teardown"


MMCV_LOAD = (
    "2023-07-21 16:07:24,690 - mmcv - INFO - load checkpoint from local path: data/pretrained_models/hrnet_pretrain.pth\n"
    "2023-07-21 16:07:33,186 - mmcv - WARNING - The model and loaded state dict do not match exactly\n"
    "\n"
    "size mismatch for final_layer.weight: copying a param with shape torch.Size([17, 32, 1, 1]) from checkpoint, "
    "the shape in current model is torch.Size([54, 32, 1, 1]).\n"
    "\n"
    "2023-07-21 16:07:59,375 - mmhuman3d - INFO - Epoch [1][50/2439]\tlr: 2.000e-04, loss: 0.4121\n"
)


def test_a_failure_line_inside_a_logged_warning_was_survived(tmp_path: Path) -> None:
    """mmcv logs a non-strict load's mismatches as one WARNING record; training went on, so they ended nothing."""
    killed = "*****************************************\nMain process received SIGTERM, exiting\n"
    assert _run(tmp_path, MMCV_LOAD + killed).root_cause.id != "checkpoint-mismatch"


def test_the_same_line_raised_as_an_exception_is_the_root_cause(tmp_path: Path) -> None:
    raised = (
        "Traceback (most recent call last):\n"
        '  File "train.py", line 12, in <module>\n'
        "    model.load_state_dict(state)\n"
        "RuntimeError: Error(s) in loading state_dict for HRNet:\n"
        "\tsize mismatch for final_layer.weight: copying a param with shape torch.Size([17, 32, 1, 1]) from checkpoint, "
        "the shape in current model is torch.Size([54, 32, 1, 1]).\n"
    )
    assert _run(tmp_path, raised).root_cause.id == "checkpoint-mismatch"


CHILD_FAILED = (
    "Traceback (most recent call last):\n"
    '  File "/usr/bin/torchrun", line 8, in <module>\n'
    "    sys.exit(main())\n"
    "torch.distributed.elastic.multiprocessing.errors.ChildFailedError: \n"
    "============================================================\n"
    "train.py FAILED\n"
    "------------------------------------------------------------\n"
    "Root Cause (first observed failure):\n"
    "[0]:\n"
    "  time      : 2025-06-01_10:00:00\n"
    "  host      : node-a\n"
    "  rank      : 6 (local_rank: 6)\n"
    "  exitcode  : 1 (pid: 4242)\n"
    "  error_file: <N/A>\n"
    "  traceback : To enable traceback see: https://pytorch.org/docs/stable/elastic/errors.html\n"
    "============================================================\n"
)


def test_a_workers_own_exception_known_to_no_entry_is_unknown_with_the_launchers_rank(tmp_path: Path) -> None:
    """A user's assert ended rank 6: no entry knows it, so the answer is unknown, not 'launcher teardown', and the
    launcher's report still gives the rank."""
    worker = (
        "Traceback (most recent call last):\n"
        '  File "train.py", line 609, in main\n'
        "    assert not training_args.visual_und\n"
        "AssertionError\n"
    )
    diagnosis = _run(tmp_path, worker + CHILD_FAILED)
    assert diagnosis.root_cause.id == "unknown"
    assert diagnosis.initiating_rank == 6


@pytest.mark.parametrize(
    "own",
    [
        "Exception: the tokenizer has no pad token\n",  # Python's bare ``raise Exception(...)``
        "Error: the dataset path /data/train does not exist\n",  # a CLI's own error line
    ],
)
def test_a_bare_exception_or_error_line_is_the_workers_own(tmp_path: Path, own: str) -> None:
    """``Exception:`` and ``Error:`` name no subclass, yet a process printed them: the teardown is not all there is."""
    diagnosis = _run(tmp_path, own + CHILD_FAILED)
    assert diagnosis.root_cause.id == "unknown"
    assert diagnosis.initiating_rank == 6


def test_the_launchers_report_alone_still_names_its_teardown(tmp_path: Path) -> None:
    diagnosis = _run(tmp_path, CHILD_FAILED)
    assert diagnosis.root_cause.id == "elastic-teardown"
    assert diagnosis.initiating_rank == 6


# c10d's socket.cpp logs each retry at W and the final give-up at E: each glog line is a record of its own.
C10D_RETRIES_THEN_TIMEOUT = (
    "[W416 15:37:25.363094293 socket.cpp:933] [c10d] The server socket on [::ffff:10.0.0.13]:40613 has timed out, "
    "will retry.\n"
    "[W416 15:39:40.531073896 socket.cpp:933] [c10d] The server socket on [::ffff:10.0.0.13]:40613 has timed out, "
    "will retry.\n"
    "[E416 15:40:10.861069241 socket.cpp:1023] [c10d] The client socket has timed out after 300000ms while trying to "
    "connect to (node-a, 40613).\n"
)


def test_an_error_record_after_warning_records_is_not_part_of_them(tmp_path: Path) -> None:
    """The E line starts its own record: the W lines before it do not make it a survived warning."""
    assert _run(tmp_path, C10D_RETRIES_THEN_TIMEOUT).root_cause.id == "rendezvous-failure"


# An excerpt that starts mid-traceback: the worker's frames and exception, then torchrun's teardown of the others.
CUT_TRACEBACK_THEN_TEARDOWN = (
    '[rank9]:   File "/root/fms/modules/attention.py", line 438, in __init__\n'
    "[rank9]:     nheads % world_size == 0\n"
    "[rank9]: AssertionError: The number of heads must be divisible by world size\n"
    + "".join(
        f"W0527 09:20:36.762000 140735466850080 torch/distributed/elastic/multiprocessing/api.py:857] Sending process "
        f"{pid} closing signal SIGTERM\n"
        for pid in range(96484, 96490)
    )
)


def test_an_exception_under_frames_whose_header_was_cut_is_the_workers_own(tmp_path: Path) -> None:
    """Without its 'Traceback' header the worker's exception is still its own: unknown with its rank, not teardown."""
    diagnosis = _run(tmp_path, CUT_TRACEBACK_THEN_TEARDOWN)
    assert (diagnosis.root_cause.id, diagnosis.initiating_rank) == ("unknown", 9)


# Horovod's SHUT_DOWN_ERROR on the rank still waiting, then mpirun's report naming the first process to fail.
HOROVOD_SHUT_DOWN_THEN_MPIRUN = (
    '[1,1]<stderr>:  File "/opt/conda/lib/python3.6/site-packages/horovod/torch/mpi_ops.py", line 436, in synchronize\n'
    "[1,1]<stderr>:    mpi_lib.horovod_torch_wait_and_clear(handle)\n"
    "[1,1]<stderr>:RuntimeError: Horovod has been shut down. This was caused by an exception on one of the ranks or an "
    "attempt to allreduce, allgather or broadcast a tensor after one of the ranks finished execution.\n"
    "--------------------------------------------------------------------------\n"
    "Primary job  terminated normally, but 1 process returned\n"
    "a non-zero exit code. Per user-direction, the job has been aborted.\n"
    "--------------------------------------------------------------------------\n"
    "mpirun detected that one or more processes exited with non-zero status, thus causing\n"
    "the job to be terminated. The first process to do so was:\n"
    "\n"
    "  Process name: [[50371,1],0]\n"
    "  Exit code:    1\n"
)


def test_a_consequence_a_signature_knows_is_not_the_workers_own_exception(tmp_path: Path) -> None:
    """Horovod's shut-down error says the cause is on another rank: the launcher's report names that rank."""
    diagnosis = _run(tmp_path, HOROVOD_SHUT_DOWN_THEN_MPIRUN)
    assert (diagnosis.root_cause.id, diagnosis.initiating_rank) == ("mpi-abort", 0)


def test_an_unknown_with_the_programs_own_exception_says_so(tmp_path: Path) -> None:
    """The log shows the exception that ended the run: the answer cites it first and explains it as the program's
    own (program-error), not 'the evidence is somewhere else' (the bare unknown entry's text)."""
    from diagnose.encyclopedia.entries import load_entries

    texts = {entry.id: entry for entry in load_entries()}
    own = _run(tmp_path, CUT_TRACEBACK_THEN_TEARDOWN)
    assert own.root_cause.id == "unknown"
    assert own.mechanism == texts["program-error"].mechanism and own.fix == texts["program-error"].fix
    assert own.evidence[0].text.endswith("AssertionError: The number of heads must be divisible by world size")
    silent = _run(tmp_path, TRAINING)
    assert silent.is_unknown and silent.mechanism == texts["unknown"].mechanism


def test_an_unknown_without_an_exception_shows_the_lines_that_say_something_failed(tmp_path: Path) -> None:
    # no traceback, error line or signal: the suspicious lines are the failure-worded ones, not none at all
    text = (
        "node1:1001:1101 [0] NCCL INFO Using network IB\n"
        "node1:1001:1101 [0] transport/net_ib.cc:1295 NCCL WARN NET/IB : the fabric manager lost its lease on mlx5_0:1\n"
        "node1:1001:1101 [0] NCCL INFO comm 0x55d0 rank 0 nranks 2 cudaDev 0 busId 1000 - Init COMPLETE\n"
    )
    diagnosis = _run(tmp_path, text)
    assert diagnosis.is_unknown
    assert [(e.line, "NCCL WARN" in e.text) for e in diagnosis.evidence] == [(2, True)]


def test_an_announcing_exception_line_without_its_traceback_still_yields_to_what_it_wraps(tmp_path: Path) -> None:
    oom = "OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB. GPU 0 has a total capacity of 79.15 GiB\n"
    wrapper = "torch._dynamo.exc.BackendCompilerFailed: backend='inductor' raised:\n"
    assert _run(tmp_path, wrapper + oom).root_cause.id == "cuda-oom"  # an excerpt: the traceback above was not pasted
    # an exception line that does not announce more is not a wrapper of the next one: see
    # test_discriminators.test_a_bare_enospc_next_to_shared_memory_exhaustion_is_shared_memory


def test_the_worker_traceback_in_torchruns_report_ends_at_its_own_exception(tmp_path: Path) -> None:
    report = (  # @record puts the worker's traceback in the Root Cause block, indented under "traceback :"
        "Root Cause (first observed failure):\n[0]:\n  time      : 2024-05-01_10:00:00\n  host      : node1\n"
        "  rank      : 0 (local_rank: 0)\n  exitcode  : 1 (pid: 1234)\n"
        "  traceback : Traceback (most recent call last):\n"
        '    File "/work/train.py", line 42, in main\n'
        "      cfg = configs[args.name]\n"
        "  KeyError: 'llama-7b'\n"
        "  \n" + "=" * 60 + "\n"
    )
    diagnosis = _run(tmp_path, report)
    assert diagnosis.root_cause.id == "unknown"
    assert "KeyError: 'llama-7b'" in diagnosis.evidence[0].text  # not the closing rule of the report


def test_a_bare_exception_line_before_the_launchers_exit_1_report_is_what_the_worker_died_of(tmp_path: Path) -> None:
    teardown = (
        "W0101 00:00:01.000000 123 torch/distributed/elastic/multiprocessing/api.py:897] Sending process 201 closing signal "
        "SIGTERM\n"
        "E0101 00:00:01.500000 123 torch/distributed/elastic/multiprocessing/api.py:869] failed (exitcode: 1) local_rank: 0 "
        "(pid: 200) of binary: /usr/bin/python\n"
    )
    assert _run(tmp_path, teardown).root_cause.id == "elastic-teardown"  # only the launcher spoke
    raised = "[rank0]: ValueError: invalid literal for int() with base 10: 'abc'\n"  # the excerpt kept no frames
    diagnosis = _run(tmp_path, raised + teardown)
    assert (diagnosis.root_cause.id, diagnosis.initiating_rank) == ("unknown", 0)
    assert "ValueError" in diagnosis.evidence[0].text


_CHILD_FAILED = (
    "Traceback (most recent call last):\n"
    '  File "/usr/lib/python3.8/site-packages/torch/distributed/launcher/api.py", line 264, in launch_agent\n'
    "    raise ChildFailedError(\n"
    "torch.distributed.elastic.multiprocessing.errors.ChildFailedError: \n" + "=" * 60 + "\ntrain.py FAILED\n"
)


@pytest.mark.parametrize(("exitcode", "expected"), [(None, "unknown"), ("-9", "host-oom-killed")])
def test_a_bare_exception_line_before_a_childfailederror_is_what_the_worker_died_of(
    tmp_path: Path, exitcode: str | None, expected: str
) -> None:
    """A report cut before its exit code names a worker that raised; one naming a kill does not."""
    raised = "KeyError: \"Override 'local-rank' not found in: ['seed', 'debug']\"\n"
    report = (
        _CHILD_FAILED
        if exitcode is None
        else _CHILD_FAILED
        + (
            "Failures:\n  <NO_OTHER_FAILURES>\n" + "-" * 60 + "\nRoot Cause (first observed failure):\n[0]:\n"
            "  time      : 2024-03-28_11:59:50\n  host      : node1\n  rank      : 0 (local_rank: 0)\n"
            f"  exitcode  : {exitcode} (pid: 200)\n  error_file: <N/A>\n  traceback : Signal 9 (SIGKILL) received by PID 200\n"
            + "=" * 60
            + "\n"
        )
    )
    assert _run(tmp_path, raised + report).root_cause.id == expected


@pytest.mark.parametrize(("ranks", "expected"), [((7, 4, 3), None), ((7,), 7)])
def test_an_unknown_exception_every_rank_raised_alike_names_no_rank(tmp_path: Path, ranks: tuple[int, ...], expected: int | None) -> None:
    """The same program error on several ranks (each naming itself in the message) went first on none of them."""
    text = "".join(
        f"[rank{r}]: Traceback (most recent call last):\n"
        f'[rank{r}]:   File "train.py", line 50, in forward\n'
        f"[rank{r}]:     assert batch.keys() == fields\n"
        f"[rank{r}]: AssertionError: [{r}]: batch keys do not match the collator fields\n"
        for r in ranks
    )
    diagnosis = _run(tmp_path, text)
    assert (diagnosis.root_cause.id, diagnosis.initiating_rank) == ("unknown", expected)


def test_an_exception_every_rank_raised_alike_takes_the_rank_the_launcher_observed_first(tmp_path: Path) -> None:
    """Printed order proves nothing when all ranks raised alike; torchrun's root-cause report names the first failure it saw."""
    raised = "".join(
        f"[rank{r}]: Traceback (most recent call last):\n"
        f'[rank{r}]:   File "train.py", line 24, in setup\n'
        f"[rank{r}]: RuntimeError: world_size (4) is less than sequence_parallel_size 8\n"
        for r in (0, 1, 2, 3)
    )
    report = (
        _CHILD_FAILED + "Failures:\n  <NO_OTHER_FAILURES>\n" + "-" * 60 + "\nRoot Cause (first observed failure):\n[0]:\n"
        "  time      : 2026-03-13_15:53:46\n  host      : node1\n  rank      : 2 (local_rank: 2)\n"
        "  exitcode  : 1 (pid: 536922)\n  error_file: <N/A>\n" + "=" * 60 + "\n"
    )
    diagnosis = _run(tmp_path, raised + report)
    assert (diagnosis.root_cause.id, diagnosis.initiating_rank) == ("unknown", 2)
    assert any("ranks 0, 1, 2, 3 raised the same exception; the launcher observed rank 2" in note for note in diagnosis.notes)


def test_an_environment_dump_is_configuration_not_a_failure(tmp_path: Path) -> None:
    """A job script's ``env`` dump names a driver mismatch on every healthy NGC start; the exception that ended the run decides."""
    text = (
        "0: NCCL_NET_PLUGIN=ofi\n"
        "0: _CUDA_COMPAT_STATUS=System has unsupported display driver / cuda driver combination "
        "(CUDA_ERROR_SYSTEM_DRIVER_MISMATCH) cuInit()=803\n"
        "0: [default0]:[rank0]: Traceback (most recent call last):\n"
        '0: [default0]:[rank0]:   File "kernels/attn.py", line 94, in forward\n'
        "0: [default0]:[rank0]: RuntimeError: expected scalar type Float but found BFloat16\n"
    )
    assert _run(tmp_path, text).root_cause.id == "dtype-mismatch"
    assert _run(tmp_path, text.replace("0: _CUDA_COMPAT_STATUS=", "0: ")).root_cause.id == "cuda-driver-mismatch"


def test_a_warning_the_run_lived_past_is_no_root_cause_when_a_person_stopped_it(tmp_path: Path) -> None:
    """A hub lookup that only warned, training going on, then Ctrl-C: the stop is how the run ended."""
    text = (
        "/venv/lib/python3.10/site-packages/peft/utils/other.py:611: UserWarning: Unable to fetch remote file due to the "
        "following error (MaxRetryError(\"HTTPSConnectionPool(host='huggingface.co', port=443): Max retries exceeded with url: "
        "/google/gemma-2-9b/resolve/main/config.json (Caused by ConnectTimeoutError(<urllib3.connection.HTTPSConnection object>, "
        "'Connection to huggingface.co timed out. (connect timeout=10)'))\"), '(Request ID: 1)') - silently ignoring the lookup "
        "for the file config.json in google/gemma-2-9b.\n"
        "{'loss': 1.2345, 'grad_norm': 0.5, 'learning_rate': 0.0001, 'epoch': 0.01}\n"
        "Traceback (most recent call last):\n"
        '  File "train.py", line 120, in <module>\n'
        "    trainer.train()\n"
        "KeyboardInterrupt\n"
    )
    assert _run(tmp_path, text).root_cause.id == "user-interrupt"
    failed = text.replace("KeyboardInterrupt\n", "RuntimeError: boom\n")  # another failure ended it: the warning stays a suspect
    assert _run(tmp_path, failed).root_cause.id != "user-interrupt"


TORCHVISION_WARNING = (
    "/env/lib/python3.10/site-packages/torchvision/io/image.py:13: UserWarning: Failed to load image Python extension: "
    "'/env/lib/python3.10/site-packages/torchvision/image.so: undefined symbol: _ZN3c1017RegisterOperatorsD1Ev'"
    "If you don't plan on using image functionality from `torchvision.io`, you can ignore this warning.\n"
    "2026-03-06 06:20:43,868 INFO: End of training. Time consumed: 2 days, 19:43:56\n"
)
TRACEBACK_UNDER_BAR = (
    "\r  0%|          | 0/500 [00:00<?, ?image/s]Traceback (most recent call last):\n"
    '  File "/code/basicsr/train.py", line 264, in train_pipeline\n'
    "    model.validation(val_loaders, current_iter, tb_logger)\n"
    '  File "/env/lib/python3.10/site-packages/torch/nn/modules/module.py", line 1928, in __getattr__\n'
    "    raise AttributeError(\n"
    "{exception}\n"
)


def test_a_traceback_glued_to_a_progress_bar_is_read_to_its_exception(tmp_path: Path) -> None:
    """tqdm's bar (indented by its own padding) is not the header's indentation: the frames belong to the traceback."""
    text = TRACEBACK_UNDER_BAR.format(exception="AttributeError: 'WaveMamba' object has no attribute 'test'")
    result = _result(tmp_path, {"train.log": text})
    (traceback,) = [e for e in result.log.events if e.kind == "traceback"]
    assert traceback.exception_type == "AttributeError"


@pytest.mark.parametrize(
    ("exception", "expected"),
    [
        ("AttributeError: 'WaveMamba' object has no attribute 'test'", "unknown"),  # the user's code, long after the warning
        ("OSError: [Errno 5] Input/output error", "import-abi-error"),  # not a coding error: the warning stays a suspect
    ],
)
def test_a_python_warning_the_run_lived_past_yields_to_an_error_in_its_own_code(tmp_path: Path, exception: str, expected: str) -> None:
    text = TORCHVISION_WARNING + TRACEBACK_UNDER_BAR.format(exception=exception)
    assert _run(tmp_path, text).root_cause.id == expected


def test_an_exception_python_ignored_is_not_what_a_process_died_of(tmp_path: Path) -> None:
    """An atexit callback's traceback under "Exception ignored in" on node 1, then rank 0's own error, then the
    other node's agent losing the store rank 0's node hosted: rank 0's exception is the start."""
    text = (
        "1: Exception ignored in atexit callback: <function matmul_ext_update_autotune_table at 0x7f972d1c3100>\n"
        "1: Traceback (most recent call last):\n"
        '1:   File "/w/deepspeed/ops/transformer/inference/triton/matmul_ext.py", line 186, in _update_autotune_table\n'
        "1: FileNotFoundError: [Errno 2] No such file or directory: '/home/u/.triton/autotune/kernel.pickle.tmp'\n"
        "0: [rank0]: Traceback (most recent call last):\n"
        '0: [rank0]:   File "/w/train.py", line 210, in <module>\n'
        "0: [rank0]: ValueError: min() arg is an empty sequence\n"
        "1: W0417 13:16:41.681000 651856 site-packages/torch/distributed/elastic/rendezvous/dynamic_rendezvous.py:1331] The node "
        "'node1_651856_0' has failed to send a keep-alive heartbeat to the rendezvous 'none' due to an error of type "
        "RendezvousConnectionError.\n"
    )
    diagnosis = _run(tmp_path, text)
    assert (diagnosis.root_cause.id, diagnosis.initiating_rank) == ("unknown", 0)


def test_the_exception_line_of_an_ignored_traceback_is_no_process_s_own(tmp_path: Path) -> None:
    """A reward function's signal handler raised inside a finalizer (Python printed it and went on); minutes later two
    ranks time out in one collective: a hang, not the ignored TimeoutError. Its own line (under the frames) is part of
    the ignored traceback, also when the paste put a blank line between two frames."""
    for gap in ("", "\n"):
        text = (
            "Exception ignored in: <finalize object at 0x7f7d7b9bc920; dead>\n"
            "Traceback (most recent call last):\n"
            '  File "/env/lib/python3.12/weakref.py", line 585, in __call__\n'
            "    def __call__(self, _=None):\n"
            f"{gap}"
            '  File "/env/lib/python3.12/site-packages/math_verify/utils.py", line 43, in handler\n'
            '    raise TimeoutError("Operation timed out!")\n'
            "TimeoutError: Operation timed out!\n"
        ) + "".join(
            f"[rank{r}]:[E516 06:09:16.29566604{r} ProcessGroupNCCL.cpp:629] [Rank {r}] Watchdog caught collective operation "
            "timeout: WorkNCCL(SeqNum=49296, OpType=_ALLGATHER_BASE, NumelIn=192, NumelOut=576, Timeout(ms)=1800000) ran for "
            "1800076 milliseconds before timing out.\n"
            for r in (1, 2)
        )
        assert _run(tmp_path, text).root_cause.id == "nccl-timeout-hang", gap


CUDNN_PLAN_OOM = (
    "/env/lib/python3.10/site-packages/torch/autograd/graph.py:744: UserWarning: Plan failed with an OutOfMemoryError: "
    "CUDA out of memory. Tried to allocate 780.00 MiB. GPU  (Triggered internally at "
    "../aten/src/ATen/native/cudnn/Conv_v8.cpp:924.)\n"
    "  return Variable._execution_engine.run_backward(  # Calls into the C++ engine to run the backward pass\n"
)


def test_cudnns_plan_search_warning_of_an_oom_is_no_oom(tmp_path: Path) -> None:
    """cuDNN v8 tries the next plan when one's workspace does not fit: the run went on and died of something else."""
    saving = (
        "Epoch: [9] Total time: 0:01:02\n"
        "Traceback (most recent call last):\n"
        '  File "train.py", line 88, in <module>\n'
        "    torch.save(model.state_dict(), path)\n"
        "RuntimeError: Parent directory /data/out does not exist.\n"
    )
    assert _run(tmp_path, CUDNN_PLAN_OOM * 3 + saving).root_cause.id != "cuda-oom"
    real = "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB. GPU 0 has a total capacity of 23.64 GiB\n"
    assert (
        _run(
            tmp_path, CUDNN_PLAN_OOM * 3 + saving.replace("RuntimeError: Parent directory /data/out does not exist.\n", real)
        ).root_cause.id
        == "cuda-oom"
    )
