"""Exception messages wrapped over several lines are matched as one message (``diagnose.parse.wrapped``).

The messages are the libraries' own wordings, as public reports quote them:

- dtype: PyTorch ``aten/src/ATen/native/Convolution.cpp`` ``check_input_same_type_as_parameters`` ("Input type (",
  input, ") and weight type (", weight, ") should be the same"), quoted in Yu-Fangxu/COLD-Attack#20.
- NCCL bf16: ``Input tensor data type is not supported for NCCL process group: BFloat16``, pytorch/pytorch#53439 and
  Lightning-AI/pytorch-lightning#14347 (raised at ``work = group.broadcast([tensor], opts)``).
- cuBLAS bf16: deepspeedai/DeepSpeed#6723 (``CUBLAS_STATUS_NOT_SUPPORTED when calling `cublasGemmStridedBatchedEx(...
  CUDA_R_16BF ...``); the fp16 call of the same check: buaacyw/GaussianEditor#46 (``cublasGemmEx( ... CUDA_R_16F``).
- OOM accounting: lllyasviel/FramePack#369 (396.58 MiB reserved but unallocated for a 30.29 GiB request: not
  fragmentation), carolchenyx/MGFN.#35 (2.30 GiB unallocated for a 1.70 GiB request: fragmentation), and vLLM's record of
  one (the example in kb/entries/cuda-memory-fragmentation.md).

The wrapping is the one users paste: a terminal's hard wrap at its width (in the middle of a word), Rich's traceback
(accelerate, Lightning; rendered here by ``rich`` itself) that word-wraps the message under its box, torchrun's
``[rankN]:`` prefix on every piece with two ranks interleaved, pdsh's ``host:`` prefix (DeepSpeed's multi-node runner).
"""

from __future__ import annotations

import functools
import io
from collections.abc import Callable
from pathlib import Path

import pytest
from rich.console import Console
from rich.traceback import Traceback

from diagnose.parse import reader
from diagnose.parse.ingest import Source, read_chunks, resolve_sources
from diagnose.parse.lines import make_line
from diagnose.parse.wrapped import LOOKAHEAD, WrappedMessages
from diagnose.pipeline import Result, diagnose
from diagnose.settings import load_settings

DTYPE = "RuntimeError: Input type (torch.cuda.HalfTensor) and weight type (torch.cuda.FloatTensor) should be the same"
NCCL_BF16 = "RuntimeError: Input tensor data type is not supported for NCCL process group: BFloat16"
CUBLAS_BF16 = (
    "RuntimeError: CUDA error: CUBLAS_STATUS_NOT_SUPPORTED when calling `cublasGemmStridedBatchedEx(handle, opa, opb, (int)m, "
    "(int)n, (int)k, (void*)&falpha, a, CUDA_R_16BF, (int)lda, stridea, b, CUDA_R_16BF, (int)ldb, strideb, (void*)&fbeta, c, "
    "CUDA_R_16BF, (int)ldc, stridec, (int)num_batches, compute_type, CUBLAS_GEMM_DEFAULT_TENSOR_OP)`"
)
CUBLAS_FP16 = (
    "RuntimeError: CUDA error: CUBLAS_STATUS_NOT_SUPPORTED when calling `cublasGemmEx( handle, opa, opb, m, n, k, &falpha, a, "
    "CUDA_R_16F, lda, b, CUDA_R_16F, ldb, &fbeta, c, CUDA_R_16F, ldc, CUDA_R_32F, CUBLAS_GEMM_DEFAULT_TENSOR_OP)`"
)
OOM_FULL = (
    "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 30.29 GiB. GPU 0 has a total capacity of 10.74 GiB of which "
    "3.69 GiB is free. Including non-PyTorch memory, this process has 6.68 GiB memory in use. Of the allocated memory 6.10 GiB "
    "is allocated by PyTorch, and 396.58 MiB is reserved by PyTorch but unallocated. If reserved but unallocated memory is large "
    "try setting PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True to avoid fragmentation.  See documentation for Memory "
    "Management  (https://pytorch.org/docs/stable/notes/cuda.html#environment-variables)"
)
OOM_FRAGMENTED = (
    "torch.cuda.OutOfMemoryError: CUDA out of memory. Tried to allocate 1.70 GiB. GPU 0 has a total capacty of 6.00 GiB of which "
    "0 bytes is free. Of the allocated memory 2.93 GiB is allocated by PyTorch, and 2.30 GiB is reserved by PyTorch but "
    "unallocated. If reserved but unallocated memory is large try setting max_split_size_mb to avoid fragmentation.  See "
    "documentation for Memory Management and PYTORCH_CUDA_ALLOC_CONF"
)
OOM_IN_A_RECORD = (
    "ERROR 04-01 23:46:56 [engine.py:160] torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 546.00 MiB. GPU 0 has a "
    "total capacity of 15.77 GiB of which 514.19 MiB is free. Process 562167 has 15.25 GiB memory in use. Of the allocated memory "
    "13.73 GiB is allocated by PyTorch, with 46.00 MiB allocated in private pools (e.g., CUDA Graphs), and 736.86 MiB is reserved "
    "by PyTorch but unallocated. If reserved but unallocated memory is large try setting "
    "PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True to avoid fragmentation."
)
"""vLLM's engine logs the exception after its record header (kb/entries/cuda-memory-fragmentation.md's example)."""
FRAMES = [
    "Traceback (most recent call last):",
    '  File "/opt/train.py", line 90, in <module>',
    "    main()",
    '  File "/opt/conda/lib/python3.10/site-packages/torch/nn/modules/conv.py", line 456, in _conv_forward',
    "    return F.conv2d(input, weight, bias, self.stride,",
]


def terminal(message: str, width: int = 80) -> list[str]:
    """A terminal's hard wrap: cut at the width, in the middle of a word if it falls there."""
    return [message[i : i + width] for i in range(0, len(message), width)]


def rich_lines(message: str, width: int = 80) -> list[str]:
    """Rich's traceback of ``RuntimeError(message)``, as accelerate prints it: a box of frames, then the message word-wrapped."""
    kind, _, text = message.partition(": ")

    def conv() -> None:
        raise RuntimeError(text)

    try:
        conv()
    except RuntimeError as exc:
        out = io.StringIO()
        Console(file=out, width=width, color_system=None).print(Traceback.from_exception(type(exc), exc, exc.__traceback__))
        rendered = out.getvalue().rstrip("\n").split("\n")
    assert rendered[-1].strip() and rendered[0].startswith("╭")
    return [line.replace("RuntimeError: ", f"{kind}: ", 1) for line in rendered]


def interleave(*streams: list[str]) -> list[str]:
    """Line-buffered output of several ranks: one line of each in turn."""
    out: list[str] = []
    for i in range(max(map(len, streams))):
        out += [stream[i] for stream in streams if i < len(stream)]
    return out


def run(lines: list[str], name: str = "train.log") -> Result:
    return diagnose([Source(name, None, data=("\n".join(lines) + "\n").encode())], settings=load_settings())


def lines_of(result: Result, entry_id: str) -> list[tuple[int | None, int]]:
    return [(f.rank, f.evidence.line) for f in result.log.findings if f.entry_id == entry_id]


# (message, the entry it names; a first line alone names none, or a weaker one)
MESSAGES = [(DTYPE, "dtype-mismatch"), (NCCL_BF16, "bf16-unsupported"), (CUBLAS_BF16, "bf16-unsupported")]


@pytest.mark.parametrize(("message", "entry_id"), MESSAGES)
def test_a_message_on_one_line_names_the_entry_and_its_first_80_columns_do_not(message: str, entry_id: str) -> None:
    assert run([*FRAMES, message]).diagnosis.root_cause.id == entry_id
    assert entry_id not in {f.entry_id for f in run([*FRAMES, message[:80]]).log.findings}


@pytest.mark.parametrize(("message", "entry_id"), MESSAGES)
@pytest.mark.parametrize("wrap", [terminal, rich_lines])
def test_a_wrapped_message_is_matched_whole_and_cites_its_first_line(message: str, entry_id: str, wrap: Callable[[str], list[str]]) -> None:
    pieces = wrap(message)
    assert len(pieces) >= 2
    lines = [*FRAMES, *pieces] if wrap is terminal else pieces
    head = next(i for i, line in enumerate(lines, 1) if line.startswith("RuntimeError: "))
    result = run(lines)
    assert result.diagnosis.root_cause.id == entry_id
    assert lines_of(result, entry_id) == [(None, head)]
    evidence = next(f.evidence for f in result.log.findings if f.entry_id == entry_id)
    assert evidence.text.startswith(lines[head - 1].rstrip())  # the cited line's text, then its continuation
    assert result.log.line_text("train.log", head) == lines[head - 1]  # the line itself is kept as it is


def test_two_ranks_interleaved_each_with_its_prefix_on_every_piece() -> None:
    rank3 = [f"[rank3]: {line}" for line in [*FRAMES, *rich_lines(DTYPE)[-2:]]]
    rank1 = [f"[rank1]: {line}" for line in [*FRAMES, *rich_lines(DTYPE)[-2:]]]
    lines = ["[rank1]: step 10 loss 2.31", *interleave(rank3, rank1)]
    result = run(lines)
    heads = [i for i, line in enumerate(lines, 1) if "RuntimeError" in line]
    assert lines[heads[0] - 1].startswith("[rank3]:") and lines[heads[0]].startswith("[rank1]:")  # the heads are adjacent
    assert sorted(lines_of(result, "dtype-mismatch")) == [(1, heads[1]), (3, heads[0])]
    assert (result.diagnosis.root_cause.id, result.diagnosis.initiating_rank) == ("dtype-mismatch", 3)


def test_pdsh_host_and_rank_prefixes_and_an_agent_line_in_between() -> None:
    pieces = rich_lines(NCCL_BF16, width=70)[-2:]
    lines = [
        "worker-1: [rank3]: Traceback (most recent call last):",
        'worker-1: [rank3]:   File "/usr/local/lib/python3.8/dist-packages/torch/distributed/distributed_c10d.py", line 1197, in broadcast',
        "worker-1: [rank3]:     work = group.broadcast([tensor], opts)",
        f"worker-1: [rank3]: {pieces[0]}",
        "worker-0: [2026-12-02 06:10:00,210] [INFO] [launch.py:319:sigkill_handler] Killing subprocess 6001",
        f"worker-1: [rank3]: {pieces[1]}",
    ]
    result = run(lines)
    assert lines_of(result, "bf16-unsupported") == [(3, 4)]
    assert (result.diagnosis.root_cause.id, result.diagnosis.initiating_rank) == ("bf16-unsupported", 3)


def test_a_terminal_wrap_of_a_prefixed_line_continues_without_the_prefix() -> None:
    pieces = terminal(f"[rank2]: {DTYPE}")
    result = run(["[rank2]: step 10 loss 2.31", *[f"[rank2]: {line}" for line in FRAMES], *pieces])
    assert lines_of(result, "dtype-mismatch") == [(2, 7)]


def test_what_the_first_line_matched_alone_is_not_found_twice() -> None:
    result = run([*FRAMES, *terminal(CUBLAS_BF16, 120)])
    assert [f.entry_id for f in result.log.findings].count("cublas-cudnn-failure") == 1
    assert lines_of(result, "bf16-unsupported") == [(None, len(FRAMES) + 1)]
    assert result.diagnosis.root_cause.id == "bf16-unsupported"


@pytest.mark.parametrize(
    ("message", "root"),
    # vLLM's record: 737 MiB trapped could serve 546 MiB, but it is 4.6% of the card, under the 5% a dev case calls full
    [(OOM_FULL, "cuda-oom"), (OOM_FRAGMENTED, "cuda-memory-fragmentation"), (OOM_IN_A_RECORD, "cuda-oom")],
)
def test_the_oom_accounting_is_read_from_the_joined_message(message: str, root: str) -> None:
    whole, wrapped = run([*FRAMES, message]).diagnosis, run([*FRAMES, *terminal(message)]).diagnosis
    assert (wrapped.root_cause.id, wrapped.notes, [c.id for c in wrapped.candidates]) == (
        root,
        whole.notes,
        [c.id for c in whole.candidates],
    )


CUBLAS_BF16_FAILED = (
    "RuntimeError: CUDA error: CUBLAS_STATUS_EXECUTION_FAILED when calling `cublasGemmEx( handle, opa, opb, m, n, k, &falpha, a, "
    "CUDA_R_16BF, lda, b, CUDA_R_16BF, ldb, &fbeta, c, CUDA_R_16BF, ldc, compute_type, CUBLAS_GEMM_DEFAULT_TENSOR_OP)`"
)
"""NVIDIA/TensorRT-LLM#5390: a cuBLAS failure on bf16 operands that is not the unsupported-bf16 one (not ``NOT_SUPPORTED``)."""


def test_two_separate_messages_on_consecutive_lines_are_not_joined_into_a_false_match() -> None:
    """Joined, the fp16 ``NOT_SUPPORTED when calling `cublasGemmEx(`` and the next error's ``CUDA_R_16BF`` would read as bf16."""
    result = run([*FRAMES, CUBLAS_FP16, CUBLAS_BF16_FAILED])
    assert "bf16-unsupported" not in {f.entry_id for f in result.log.findings}
    assert lines_of(result, "cublas-cudnn-failure") == [(None, 6), (None, 7)]


# A head cut in the middle of its call, as mymusise/ChatGLM-Tuning#111 pastes it, and what may follow it.
HEAD = "RuntimeError: CUDA error: CUBLAS_STATUS_INVALID_VALUE when calling `cublasGemmEx( handle, opa, opb, m, n, k, "
PIECE = "&falpha, a, CUDA_R_16F, lda, b, CUDA_R_16F, ldb, &fbeta, c, CUDA_R_16F, ldc, CUDA_R_32F, "
FOLLOWING = [
    (PIECE, True),
    (f"  {PIECE}", True),  # an unprefixed message's own indented line (``Error(s) in loading state_dict:`` then a tab)
    ("", False),
    ('  File "/opt/train.py", line 90, in <module>', False),
    ("Traceback (most recent call last):", False),
    ("During handling of the above exception, another exception occurred:", False),
    ("torch.distributed.DistBackendError: NCCL error in: ../torch/csrc/distributed/c10d/NCCLUtils.hpp:317", False),
    ("ncclSystemError: System call (e.g. socket, malloc) or external library call failed or device error.", False),
    ("[2026-12-02 06:10:00,001] [INFO] [launch.py:319:sigkill_handler] Killing subprocess 5511", False),
    (
        "W0813 22:08:39.776000 2585 torch/distributed/elastic/multiprocessing/api.py:898] Sending process 47944 closing signal SIGTERM",
        False,
    ),
    ("[E ProcessGroupNCCL.cpp:475] [Rank 12] Watchdog caught collective operation timeout", False),
    ("<HOST_1>:3121:3121 [0] NCCL INFO Bootstrap : Using ib0", False),
    ("/opt/conda/lib/python3.11/site-packages/torch/utils/checkpoint.py:1399: FutureWarning: `torch.cpu.amp.autocast(args...)`", False),
    ("INFO:torch.distributed.elastic.agent.server.api:Received 2 death signal, shutting down workers", False),
    ("╰──────────────────────────────────────────────────────────────────────────────╯", False),
    ("============================================================", False),
    ("Exception raised from c10_cuda_check_implementation at ../c10/cuda/CUDAException.cpp:44 (most recent call first):", False),
]


class _Recorder:
    """A scanner that records what it is asked to scan (and matches nothing)."""

    def __init__(self) -> None:
        self.texts: list[str] = []

    def scan(self, text: str, lines: list[str] | None = None) -> list[tuple[int, int]]:
        self.texts += text.split("\n")
        return []


def joined(lines: list[str]) -> list[str]:
    """The space-joined messages the wrapped reader scans when line 0 is an error line."""
    recorder = _Recorder()
    messages = WrappedMessages(recorder, rules=None, head_kind=0, first_signature=1)  # type: ignore[arg-type]
    messages.findings([(0, 0)], lines, lambda i: make_line("train.log", i + 1, lines[i]), 0, lambda i, rank: None)
    return recorder.texts[::2]


@pytest.mark.parametrize(("following", "continues"), FOLLOWING)
def test_what_continues_a_message_and_what_does_not(following: str, continues: bool) -> None:
    assert joined([HEAD, following]) == ([f"{HEAD.rstrip()} {following.strip()}"] if continues else [])


def test_the_same_with_launcher_prefixes_and_another_rank_in_between() -> None:
    assert joined([f"[rank0]: {HEAD}", f"[rank1]: {PIECE}"]) == []
    assert joined([f"[rank0]: {HEAD}", f"[rank1]: {PIECE}", f"[rank0]: {PIECE}"]) == [f"[rank0]: {HEAD.rstrip()} {PIECE.strip()}"]
    assert joined([f"[rank0]: {HEAD}", PIECE]) == [f"[rank0]: {HEAD.rstrip()} {PIECE.strip()}"]  # a terminal's wrap of the line
    assert joined([f"[rank0]: {HEAD}", f"  {PIECE}"]) == []  # an indented unprefixed line is not that
    assert joined([f"[rank0]: {HEAD}", *[f"[rank1]: step {i}" for i in range(LOOKAHEAD)], f"[rank0]: {PIECE}"]) == []


def test_a_line_that_is_no_exception_head_is_not_joined_to() -> None:
    assert joined(["[rank0]:[E1202 12:01:02.123 ProcessGroupNCCL.cpp:616] [Rank 0] Watchdog caught collective", PIECE]) == []
    assert joined(["step 10 | loss 2.31 | error: 0.2", PIECE]) == []


def test_interleaved_ranks_join_each_rank_with_its_own_continuation() -> None:
    """Rank 1's bf16 message is wrapped; rank 0's fp16 one is whole: rank 0's line followed by rank 1's piece is no match."""
    bf16 = terminal(CUBLAS_BF16, 120)
    lines = [f"[rank1]: {bf16[0]}", f"[rank0]: {CUBLAS_FP16}", *(f"[rank1]: {piece}" for piece in bf16[1:])]
    result = run(lines)
    assert lines_of(result, "bf16-unsupported") == [(1, 1)]
    assert sorted(lines_of(result, "cublas-cudnn-failure")) == [(0, 2), (1, 1)]


def test_a_head_at_the_end_of_a_chunk_continues_in_the_next(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    before = [f"[rank{r % 4}]: step {r} | loss 2.31 | lr 2.40e-04" for r in range(60)]
    pieces = [f"[rank2]: {line}" for line in rich_lines(DTYPE)[-2:]]
    text = "\n".join([*before, *pieces, *before]) + "\n"
    path = tmp_path / "train.log"
    path.write_text(text)
    head_end = text.index(pieces[0]) + len(pieces[0]) + 1
    for chunk_bytes in (head_end, head_end + 4, len(text) // 3):
        for keep in (reader.KEEP_ALL_LINES, 10):  # whole lines kept, or windows around what matched (a big log)
            monkeypatch.setattr(reader, "read_chunks", functools.partial(read_chunks, chunk_bytes=chunk_bytes))
            monkeypatch.setattr(reader, "KEEP_ALL_LINES", keep)
            result = diagnose(resolve_sources([str(path)]), settings=load_settings())
            assert lines_of(result, "dtype-mismatch") == [(2, 61)], (chunk_bytes, keep)
            assert result.log.line_text("train.log", 62) == pieces[1]


def test_a_head_at_the_end_of_one_file_is_not_continued_by_the_next_file(tmp_path: Path) -> None:
    (tmp_path / "rank_0.log").write_text("\n".join([*FRAMES, "RuntimeError: Input type (torch.cuda.HalfTensor) and weight type"]) + "\n")
    (tmp_path / "rank_1.log").write_text("(torch.cuda.FloatTensor) should be the same\nstep 10 loss 2.31\n")
    result = diagnose(resolve_sources([str(tmp_path)]), settings=load_settings())
    assert lines_of(result, "dtype-mismatch") == []


@pytest.mark.parametrize(
    ("error", "message", "entry_id"),
    [
        # MXNet's storage manager (src/storage/pooled_storage_manager.h) under the C++ runtime's terminate handler
        ("dmlc::Error", "[10:44:35] src/storage/./pooled_storage_manager.h:107: cudaMalloc failed: out of memory", "cuda-oom"),
        ("c10::Error", "CUDA error: an illegal memory access was encountered", "cuda-illegal-memory-access"),
    ],
)
def test_a_cpp_exceptions_what_line_wrapped_inside_a_word_is_joined(error: str, message: str, entry_id: str) -> None:
    what = f"  what():  {message}"
    cut = what.index("failed") + 4 if "failed" in what else what.index("memory") + 3
    result = run([f"terminate called after throwing an instance of '{error}'", what[:cut], what[cut:]])
    assert result.diagnosis.root_cause.id == entry_id
    assert lines_of(result, entry_id)[0][1] == 2


def test_a_rank_the_message_names_past_its_first_piece_is_read_from_the_joined_message() -> None:
    # the DDP check names the rank with other parameters at its end, past a terminal's first 80 columns
    message = "RuntimeError: DDP expects same model across all ranks, but Rank 0 has 382 params, while rank 1 has inconsistent 0 params."
    whole = run([*FRAMES, message]).diagnosis
    wrapped = run([*FRAMES, *terminal(message)]).diagnosis
    assert "rank 1" not in terminal(message)[0]
    assert (whole.root_cause.id, whole.initiating_rank) == ("ddp-model-mismatch", 1)
    assert (wrapped.root_cause.id, wrapped.initiating_rank) == ("ddp-model-mismatch", 1)
