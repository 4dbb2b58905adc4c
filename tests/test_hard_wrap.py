"""A log hard-wrapped at a terminal's width is read whole again, at the first piece's line (``diagnose.parse.hard_wrap``).

The lines are real ones: NCCL's plugin probe (``NET/Plugin : dlerror=libnccl-net.so: cannot open shared object
file``, logged at INFO on every start without the optional plugin), the CUDA illegal-access error and c10's watchdog
wording, as the kb entries quote them.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from diagnose.parse.hard_wrap import unwrap, wrap_width
from diagnose.pipeline import Result, diagnose
from diagnose.settings import load_settings

PLUGIN = (
    "gpu-node-07:2817:2903 [0] NCCL INFO NET/Plugin : dlerror=libnccl-net.so: cannot open shared object file: "
    "No such file or directory No plugin found (libnccl-net.so), using internal implementation"
)
TRAINING = "[rank{r}]: step {s} | loss 2.{s:03d} | lr 3.0e-04 | tokens/s 154,221 | grad_norm 0.41 | mem 61.2 GiB | data 0.031s"
ILLEGAL = "[rank3]: RuntimeError: CUDA error: an illegal memory access was encountered"
ASYNC = "[rank3]: CUDA kernel errors might be asynchronously reported at some other API call, so the stacktrace below might be incorrect."
SECRET = "hf_QmVtZXJhbGRLaW5nZmlzaGVyU2VyZW5kaXB0eQ"


def _wrap(lines: list[str], width: int) -> str:
    """What a terminal of ``width`` columns shows: each line cut into pieces of exactly that width."""
    out: list[str] = []
    for line in lines:
        while len(line) > width:
            out.append(line[:width])
            line = line[width:]
        out.append(line)
    return "\n".join(out) + "\n"


def _log() -> list[str]:
    training = [TRAINING.format(r=r, s=s) for s in range(100, 110) for r in range(4)]
    return [PLUGIN] * 4 + training + [f"export HF_TOKEN={SECRET} && torchrun --nproc-per-node 4 train.py --resume"] + [ILLEGAL, ASYNC]


def _run(tmp_path: Path, text: str) -> Result:
    path = tmp_path / "train.log"
    path.write_text(text, encoding="utf-8")
    return diagnose([path], settings=load_settings(retrieval=False))


def test_a_wrapped_log_is_read_as_printed(tmp_path: Path) -> None:
    wrapped = _wrap(_log(), 80)
    assert wrap_width(wrapped.split("\n")) == 80
    result = _run(tmp_path, wrapped)
    diagnosis = result.diagnosis
    # the plugin probe's piece "...cannot open shared object file" is no import error: its NCCL INFO head is joined back
    assert diagnosis.root_cause.id == "cuda-illegal-memory-access"
    assert diagnosis.initiating_rank == 3
    first = next(e for e in diagnosis.evidence if "illegal memory access" in e.text)
    lines = wrapped.split("\n")
    assert lines[first.line - 1].startswith("[rank3]: RuntimeError: CUDA error")  # the first piece's own number
    assert first.text.startswith(ILLEGAL)  # and the whole line, as printed before the wrap
    assert any("hard-wrapped at 80 columns" in note for note in diagnosis.notes)
    kept = [text for texts in result.log.lines.values() for text in texts]
    # the joined line is masked from the raw pieces: the same host placeholder, not the escape of masked text (<_HOST_1>)
    assert kept[0].startswith("<HOST_1>:2817:2903 [0] NCCL INFO") and not any("<_" in text for text in kept)
    assert kept[1] == lines[1], "nothing was cut by the wrap: each piece is kept as printed"


def test_a_secret_cut_by_the_wrap_is_masked_whole(tmp_path: Path) -> None:
    launch = f"{'[rank0]: launching with':<66}HF_TOKEN={SECRET} torchrun --nproc-per-node 4 train.py"  # cut after "hf_Qm"
    lines = [launch if "HF_TOKEN" in line else line for line in _log()]
    result = _run(tmp_path, _wrap(lines, 80))
    kept = "\n".join("\n".join(text) for text in result.log.lines.values())
    assert SECRET[5:] in _wrap(lines, 80)  # the wrap put the token's tail on a line of its own
    assert SECRET[5:20] not in kept  # masked whole, and no piece of it shown as printed
    assert result.diagnosis.root_cause.id == "cuda-illegal-memory-access"


@pytest.mark.parametrize(
    "lines",
    [
        [ILLEGAL] * 8 + [ASYNC[:60]] * 3,  # one message repeated on every rank, all at the longest length
        [f"[rank{r}]: " + "x" * 90 for r in range(6)],  # lines cut at a fixed width: each next one starts a record
        [TRAINING.format(r=r, s=s) for s in range(100, 103) for r in range(4)],  # lengths spread as printed
        [  # quoted in Markdown: the frame after each long line starts a record behind its "> "
            "> Traceback (most recent call last):",
            '>   File "agent.py", line 60, in rememberMulti',
            ">     [self.remember(obs_old.cpu(), act, obs.cpu(), rew, h0.detach().cpu(), c0.detach().cpu()) for _ in x]",
            '>   File "agent.py", line 60, in <listcomp>',
            ">     [self.remember(obs_old.cpu(), act, obs.cpu(), rew, h0.detach().cpu(), c0.detach().cpu()) for _ in x]",
            "> KeyboardInterrupt",
        ],
    ],
)
def test_logs_that_were_not_wrapped_are_left_alone(lines: list[str]) -> None:
    assert wrap_width(lines) is None


def test_unwrap_keeps_every_number_and_what_each_line_showed() -> None:
    scan, keep, pieces = unwrap(["abcd", "efgh", "ij", "next"], ["abcd", "efgh", "ij", "next"], 4, lambda line: line)
    assert scan == ["abcdefghij", "", "", "next"]  # the whole line at its first number; the pieces blank for signatures
    assert keep == ["abcdefghij", "efgh", "ij", "next"]  # the other pieces as printed, at their own numbers
    assert pieces == [1, 2]
    _, remasked, _ = unwrap(["abcd", "efgh", "ij"], ["abcd", "efgh", "ij"], 4, lambda line: line.replace("defg", "<TOKEN_1>"))
    assert remasked == ["abc<TOKEN_1>hij", "", ""]  # a value the wrap cut is masked whole; its pieces are not shown


SLURM_LIMIT = "slurmstepd: error: *** JOB {job} ON midway3-0284 CANCELLED AT 2024-05-18T12:04:20 DUE TO TIME LIMIT ***"
DEVICE_ASSERT = (
    "../aten/src/ATen/native/cuda/Loss.cu:242: nll_loss_forward_reduce_cuda_kernel_2d: block: [0,0,0], thread: [{t},0,0] "
    "Assertion `t >= 0 && t < n_classes` failed."
)
NCCL_IB = (
    "2019-06-02T16:13:44.884Z: [1,{r}]<stdout>:container-e275-1553839402050-12124-01-000057:815:864 [0] "
    "transport/net_ib.cu:80 NCCL WARN NET/IB : Got async event : local catastrophic error"
)


@pytest.mark.parametrize(
    ("lines", "why"),
    [
        ([SLURM_LIMIT.format(job=20457810), SLURM_LIMIT.format(job=20468948)], "two wrapped lines are enough"),
        ([DEVICE_ASSERT.format(t=t) for t in range(32, 38)], "repeated lines leave one remainder length, near the width"),
        ([NCCL_IB.format(r=r) for r in range(12, 16)], "a piece that starts with digits and a colon is no srun prefix"),
    ],
)
def test_short_wrapped_excerpts_are_told_from_their_widths(lines: list[str], why: str) -> None:
    assert wrap_width(_wrap(lines, 80).split("\n")) == 80, why


def test_two_equal_lines_of_their_own_are_no_wrap() -> None:
    # the same record printed twice, each whole: the line after one starts like it
    line = "[rank0]: torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB. GPU 0 has a total capacity"
    assert wrap_width([line, line, "done"]) is None


def _child_failed_report() -> list[str]:
    """torchrun's ChildFailedError report: rank 3's traceback copied from its error file into the root-cause record."""
    killed = [
        line
        for r in (0, 1, 2)
        for line in (
            f"[{r + 1}]:",
            "  time      : 2024-05-17_16:10:05",
            "  host      : gpu-node-07",
            f"  rank      : {r} (local_rank: {r})",
            f"  exitcode  : -15 (pid: 90499{r})",
            "  error_file: <N/A>",
            f"  traceback : Signal 15 (SIGTERM) received by PID 90499{r}",
        )
    ]
    return [
        "torch.distributed.elastic.multiprocessing.errors.ChildFailedError: ",
        "============================================================",
        "train.py FAILED",
        "------------------------------------------------------------",
        "Failures:",
        *killed,
        "------------------------------------------------------------",
        "Root Cause (first observed failure):",
        "[0]:",
        "  time      : 2024-05-17_16:09:56",
        "  host      : gpu-node-07",
        "  rank      : 3 (local_rank: 3)",
        "  exitcode  : -6 (pid: 904994)",
        "  error_file: /tmp/torchelastic_9vselq0w/none_8gaqlgo1/attempt_0/3/error.json",
        "  traceback : Traceback (most recent call last):",
        '    File "/opt/conda/lib/python3.11/site-packages/torch/distributed/elastic/multiprocessing/errors/'
        '__init__.py", line 355, in wrapper',
        "      return f(*args, **kwargs)",
        '    File "/workspace/project/train.py", line 843, in train_step',
        "      loss = self.model(batch).loss  # forward on this rank's shard of the global batch",
        "  RuntimeError: CUDA error: an illegal memory access was encountered",
        "  ",
        "============================================================",
    ]


def test_a_wrapped_launcher_report_keeps_the_rank_of_the_traceback_it_copied(tmp_path: Path) -> None:
    # the wrap leaves the long frames' pieces blank for reading: they neither end nor extend rank 3's copied traceback
    wrapped = _wrap([TRAINING.format(r=r, s=s) for s in range(100, 104) for r in range(4)] + _child_failed_report(), 80)
    diagnosis = _run(tmp_path, wrapped).diagnosis
    assert any("hard-wrapped at 80 columns" in note for note in diagnosis.notes)
    assert diagnosis.root_cause.id == "cuda-illegal-memory-access"
    assert diagnosis.initiating_rank == 3


def test_a_message_continued_on_the_next_record_is_joined_across_the_wrapped_pieces(tmp_path: Path) -> None:
    """c10d's monitoredBarrier error names the rank it waited for, and its gloo cause follows on the next lines
    (``diagnose.parse.wrapped`` joins them). Wrapped at 80 columns, the message's pieces read blank under its first line:
    they neither end the message nor count toward how far it is looked for, so the named rank survives the wrap."""
    barrier = [
        "[rank3]: RuntimeError: Rank 3 successfully reached monitoredBarrier, but received errors while waiting for "
        "send/recv from rank 0. Please check rank 0 logs for faulty rank.",
        "[rank3]:  Original exception: ",
        "[rank3]: [../third_party/gloo/gloo/transport/tcp/unbound_buffer.cc:133] Timed out waiting 600000ms for send operation to complete",
    ]
    lines = [*[TRAINING.format(r=r, s=s) for s in range(100, 104) for r in range(4)], *barrier]
    for name, text in (("printed.log", "\n".join(lines) + "\n"), ("wrapped.log", _wrap(lines, 80))):
        path = tmp_path / name
        path.write_text(text, encoding="utf-8")
        diagnosis = diagnose([path], settings=load_settings()).diagnosis
        assert (diagnosis.root_cause.id, diagnosis.initiating_rank) == ("nccl-timeout-hang", 0), name
