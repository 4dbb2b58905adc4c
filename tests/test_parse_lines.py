"""Launcher prefixes and timestamps: who printed a line, and when (table-driven)."""

from __future__ import annotations

import re
from datetime import UTC, datetime

import pytest

from diagnose.parse.lines import make_line
from diagnose.parse.prefixes import anchored_on_body
from diagnose.parse.timestamps import iso_year, parse_timestamp

PREFIXES = [
    # (line, rank, host)
    ("[rank5]: torch.OutOfMemoryError: CUDA out of memory.", 5, None),
    ("[default3]:[rank3]:[E1202 12:01:02.123 ProcessGroupNCCL.cpp:616] [Rank 3] Watchdog caught", 3, None),
    ("12: Traceback (most recent call last):", 12, None),
    ("<HOST_2>: [rank9]: RuntimeError: CUDA error", 9, "<HOST_2>"),
    ("worker-3: Traceback (most recent call last):", None, "worker-3"),
    ("[1,7]<stderr>:RuntimeError: NCCL error", 7, None),
    ("[3]<stderr>:RuntimeError: Horovod has been shut down.", 3, None),  # horovodrun (Gloo): no job id
    ("[1,mpirank:7,algo-2]<stderr>:FileNotFoundError: x", 7, "algo-2"),  # SageMaker's mpirun
    ("[1,mpirank:0,algo-1]:INFO:__main__:Hello from global rank 0", 0, "algo-1"),
    ("[rank: 2] Epoch 3: 100%", 2, None),
    ("[pod/<POD_1>/pytorch] RuntimeError: x", None, "<POD_1>"),
    ("[pod/train-worker-4/pytorch] RuntimeError: x", 4, "train-worker-4"),
    ("<HOST_1>:3121:3121 [0] NCCL INFO Bootstrap : Using ib0", None, "<HOST_1>"),
    ("[E ProcessGroupNCCL.cpp:475] [Rank 12] Watchdog caught collective operation timeout", 12, None),
    ("[PG ID 0 PG GUID 0(default_pg) Rank 7]  failure detected by watchdog", 7, None),
    # ProcessGroupNCCL's earlier log prefixes, as an uncaught exception's what() prints them with no launcher prefix
    ("  what():  [PG 0 Rank 3] Process group watchdog thread terminated with exception: CUDA error: unspecified launch", 3, None),
    ("  what():  [PG 0 (default_pg) Rank 5] Process group watchdog thread terminated with exception: NCCL error", 5, None),
    ("[RANK 4] 2026-05-19 10:10:29,604 [ERROR] RuntimeError: x", 4, None),  # accelerate-style upper-case tag
    # vLLM's and SGLang's worker tags: a TP rank is the rank only when no other parallel dimension is named
    ("(VllmWorker TP1 pid=22110) ERROR 11-14 22:48:02 [multiproc_executor.py:596] RuntimeError: x", 1, None),
    ("(Worker_TP3 pid=530) ERROR 10-06 18:54:29 [multiproc_executor.py:694] RuntimeError: x", 3, None),
    ("(Worker_PP1_TP0 pid=88241) ERROR 08-14 11:24:36 [multiproc_executor.py:1232] RuntimeError: x", None, None),
    ("(RayTrainWorker pid=1234, ip=<IP_1>) [rank2]: RuntimeError: x", 2, "<IP_1>"),
    ("[2025-03-29 18:56:25 TP5] Scheduler hit an exception: Traceback (most recent call last):", 5, None),
    ("[2025-03-29 18:56:25 DP1 TP5] Scheduler hit an exception: Traceback (most recent call last):", None, None),
    ("step 100 | loss 2.31 | lr 3e-4", None, None),
    # torch_npu's error head names the printing rank; RankID:-1 (before the process group exists) names none
    ("[ERROR] 2024-05-21-11:57:54 (PID:927000, Device:3, RankID:3) ERR02200 DIST call hccl api failed.", 3, None),
    ("[ERROR] 2025-03-26-17:01:03 (PID:159, Device:0, RankID:-1) ERR02200 DIST call hccl api failed.", None, None),
    ("NCCL WARN Bootstrap Root : rank 3 of 8 ranks has already checked in", 3, None),
    # a rank after "around", "from", "for" ... is another rank than the printer
    ("NCCL WARN Mismatched collective detected, please check NCCL_DEBUG logs at and around rank 39", None, None),
    ("RuntimeError: [1] is waiting for rank 0 to publish the id", None, None),
    # two ranks named in the message: neither is the one that printed it
    ("<HOST_1>:29880:30398 [0] NCCL WARN Duplicate GPU detected : rank 10 and rank 8 both on CUDA device 1000", None, "<HOST_1>"),
    ("2024-05-02 09:13:44 INFO starting", None, None),
    # a CRI container log file (/var/log/pods/...): time, stream, full/partial, then what the container printed
    ("2024-05-01T10:00:00.123456789Z stderr F [rank3]: RuntimeError: x", 3, None),
]


@pytest.mark.parametrize(("text", "rank", "host"), PREFIXES)
def test_when_line_has_prefix_then_rank_and_host_are_read(text: str, rank: int | None, host: str | None) -> None:
    line = make_line("train.log", 1, text)
    assert (line.rank, line.host) == (rank, host)


def test_when_file_name_gives_rank_then_it_is_the_fallback() -> None:
    assert make_line("rank_3.log", 1, "Traceback (most recent call last):", rank_hint=3).rank == 3
    assert make_line("rank_3.log", 1, "[rank5]: x", rank_hint=3).rank == 5


def _utc(*args: int) -> float:
    return datetime(*args, tzinfo=UTC).timestamp()


TIMESTAMPS = [
    ("[2024-05-02 09:13:44,512] INFO x", _utc(2024, 5, 2, 9, 13, 44) + 0.512),
    ("2024-05-02T09:13:44.250Z ERROR", _utc(2024, 5, 2, 9, 13, 44) + 0.25),
    ("[rank0]:[E1202 12:01:02.123456 ProcessGroupNCCL.cpp:616] x", _utc(2000, 12, 2, 12, 1, 2) + 0.123456),
    ("W0813 22:08:39.776000 2585 torch/distributed/elastic/multiprocessing/api.py:898] Sending", _utc(2000, 8, 13, 22, 8, 39) + 0.776),
    ("  time      : 2025-08-01_11:36:44", _utc(2025, 8, 1, 11, 36, 44)),
    ("May  2 09:13:44 node07 kernel: NVRM: Xid", _utc(2000, 5, 2, 9, 13, 44)),
    ("1714641224.5 step 3", 1714641224.5),
    ("2024/05/01 12:00:03 INFO mlflow", _utc(2024, 5, 1, 12, 0, 3)),
    ("step 100 loss 2.5", None),
    ("Error 12040 at 09:13", None),
]


@pytest.mark.parametrize(("text", "expected"), TIMESTAMPS)
def test_when_line_has_timestamp_then_it_is_parsed(text: str, expected: float | None) -> None:
    assert parse_timestamp(text) == pytest.approx(expected) if expected else parse_timestamp(text) is None


def test_glog_year_comes_from_the_log() -> None:
    assert parse_timestamp("E1202 12:01:02.5 x", year=2026) == pytest.approx(_utc(2026, 12, 2, 12, 1, 2) + 0.5)


def test_a_chunk_head_gives_the_year_of_its_first_full_date() -> None:
    glog = "[rank3]:[I1202 10:00:01.036001 train.py:220] step 1 | loss 2.4954\n" * 200
    assert iso_year(glog, 64 * 1024) is None
    assert iso_year(glog + "slurmstepd: error: *** JOB 42 CANCELLED AT 2024-12-02T10:00:05 ***\n", 64 * 1024) == 2024
    assert iso_year("id 12023-01-05 10:00:00 then 2025-01-05 10:00:00,123 INFO", 100) == 2025
    assert iso_year(glog + "2024-12-02 10:00:05", 100) is None  # beyond the limit


@pytest.mark.parametrize(
    ("text", "matches"),
    [
        ("loss_dict = {'loss_cls': nan}", True),
        ("[rank3]: loss_dict = {'loss_cls': nan}", True),
        ("2024-05-01T10:00:00.1234567Z loss_dict = {'loss_cls': nan}", True),
        ("2024-05-01T10:00:00.123456789Z stderr F <HOST_1>: loss_dict = {'loss_cls': nan}", True),
        ("print(loss_dict = {'loss_cls': nan})", False),
    ],
)
def test_a_signature_anchored_on_its_message_allows_launcher_prefixes_only(text: str, matches: bool) -> None:
    assert bool(re.search(anchored_on_body(r"^loss_dict = \{"), text)) is matches


@pytest.mark.parametrize(
    ("pattern", "text", "matches"),
    [
        (r"SIGKILL received|^\s*Exception: process \d+", "[pod/<HOST_1>/pytorch] Exception: process 1 terminated", True),
        (r"SIGKILL received|^\s*Exception: process \d+", "raise Exception: process 1 terminated", False),
        (r"(?:^|[^\w.])OSError: x", "[rank2]: OSError: x", True),
        (r"[^^\]]\^ caret", "a ^ caret", True),  # a caret in a class and an escaped one are no anchors
    ],
)
def test_every_anchor_of_a_signature_allows_launcher_prefixes(pattern: str, text: str, matches: bool) -> None:
    assert bool(re.search(anchored_on_body(pattern), text)) is matches
