"""A process that worked alone while the others timed out waiting for it (``diagnose.engine.stragglers``).

The shape is the one real consoles show (a dataset ``map`` or caching on the main process behind
``main_process_first``): the main process's tqdm bar is still advancing, and is glued to the watchdog report of the
rank that waited, when the collective timeout expires. A bar that had run for much less than the timeout is no sign.
Without a watchdog report, the waiting rank's traceback from inside the barrier (often cut by the paste) is the report,
and its timeout, not printed, is one of torch's defaults.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from diagnose.parse.ingest import Source
from diagnose.pipeline import diagnose

BAR = "Running tokenizer on dataset:   9%|███▊                 | {n}/2969526 [{elapsed}<4:48:08, 155.57 examples/s]"
WATCHDOG = (
    "[E ProcessGroupNCCL.cpp:475] [Rank 1] Watchdog caught collective operation timeout: WorkNCCL(SeqNum=2, "
    "OpType=ALLREDUCE, NumelIn=1, NumelOut=1, Timeout(ms)=1800000) ran for 1800328 milliseconds before timing out."
)
TEARDOWN = [
    "[E ProcessGroupNCCL.cpp:489] Some NCCL operations have failed or timed out. Due to the asynchronous nature of CUDA "
    "kernels, subsequent GPU operations might run on corrupted/incomplete data.",
    "[E ProcessGroupNCCL.cpp:495] To avoid data inconsistency, we are taking the entire process down.",
]


def _log(elapsed: list[str]) -> str:
    bars = [BAR.format(n=270000 + 1000 * i, elapsed=e) for i, e in enumerate(elapsed)]
    return "\n".join([*bars[:-1], bars[-1] + WATCHDOG, *TEARDOWN]) + "\n"


@pytest.mark.parametrize(
    ("elapsed", "expected", "rank"),
    [
        (["29:40", "29:49", "29:55"], "straggler-rank", 0),  # the bar ran for the whole 30-minute timeout: rank 1 waited for it
        (["11:40", "11:49", "11:55"], "nccl-timeout-hang", None),  # a bar that started long after the collective did
        (["1:29:40", "1:29:49", "1:29:55"], "nccl-timeout-hang", None),  # nor a bar that had run for far longer
    ],
)
def test_a_progress_bar_that_ran_as_long_as_the_timeout_names_its_process(
    tmp_path: Path, elapsed: list[str], expected: str, rank: int | None
) -> None:
    path = tmp_path / "train.log"
    path.write_text(_log(elapsed), encoding="utf-8")
    diagnosis = diagnose([Source("train.log", path)]).diagnosis
    assert diagnosis.root_cause.id == expected
    if rank is not None:
        assert diagnosis.initiating_rank == rank
        assert any("into a progress bar when the others gave up waiting for it after 1800 s" in note for note in diagnosis.notes)


WAITING_TRACEBACK = [
    "Traceback (most recent call last):",
    '  File "/w/src/train_bash.py", line 14, in <module>',
    "    main()",
    '  File "/w/src/llmtuner/dsets/preprocess.py", line 160, in preprocess_dataset',
    '    with training_args.main_process_first(desc="dataset map pre-processing"):',
    '  File "/env/lib/python3.10/contextlib.py", line 135, in __enter__',
    "    return next(self.gen)",
]


@pytest.mark.parametrize(
    ("bar", "expected"),
    [
        (BAR.format(n=383700, elapsed="29:55"), "straggler-rank"),  # transformers' ddp_timeout, torch's default: 30 min
        (BAR.format(n=383700, elapsed="10:12"), "straggler-rank"),  # ProcessGroupNCCL's default since torch 2.2: 10 min
        ("[31:13<7:10:59, 908.45 examples/s]", "straggler-rank"),  # the paste cut the bar's head
        (BAR.format(n=383700, elapsed="17:02"), "unknown"),  # no default timeout: the bar says nothing
    ],
)
def test_a_rank_that_raised_waiting_for_the_main_process_while_its_bar_ran_as_long_as_a_default_timeout(
    tmp_path: Path, bar: str, expected: str
) -> None:
    """A rank's traceback from inside ``main_process_first`` (cut before its exception), glued to the bar of the main
    process tokenizing alone: the timeout is not printed, the bar ran as long as a default one."""
    path = tmp_path / "train.log"
    path.write_text(bar + "\n".join(WAITING_TRACEBACK) + "\n", encoding="utf-8")
    assert diagnose([Source("train.log", path)]).diagnosis.root_cause.id == expected


def test_a_process_that_raised_elsewhere_is_not_hidden_behind_the_bar(tmp_path: Path) -> None:
    """Another process's own traceback (not a wait in the barrier) beside the waiting one: its error leads, not the bar."""
    crashed = [
        "[rank0]: Traceback (most recent call last):",
        '[rank0]:   File "/w/src/llmtuner/dsets/preprocess.py", line 98, in preprocess_supervised_dataset',
        '[rank0]:     for query, response in zip(examples["prompt"], examples["response"]):',
        "[rank0]: KeyError: 'response'",
    ]
    path = tmp_path / "train.log"
    text = BAR.format(n=383700, elapsed="29:55") + "\n".join(WAITING_TRACEBACK) + "\n" + "\n".join(crashed) + "\n"
    path.write_text(text, encoding="utf-8")
    assert diagnose([Source("train.log", path)]).diagnosis.root_cause.id == "unknown"
