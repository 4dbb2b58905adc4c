"""Identifying values in the positions logs print them, hosts taught by one line, and look-alikes to keep."""

from __future__ import annotations

import pytest

from redaction import Redactor


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("myhost:1234:5678 [0] NCCL INFO Bootstrap : Using eth0", "<HOST_1>:1234:5678 [0] NCCL INFO Bootstrap : Using eth0"),
        (
            "[rank3]:kestrel:1234:5678 [3] NCCL INFO cudaDriverVersion 12040",
            "[rank3]:<HOST_1>:1234:5678 [3] NCCL INFO cudaDriverVersion 12040",
        ),
        ("[rank3]:gpu-node-17:1234:5678 [3] NCCL INFO init", "[rank3]:<HOST_1>:1234:5678 [3] NCCL INFO init"),
        (
            "The client socket has failed to connect to [kestrel]:29500 (errno: 22)",
            "The client socket has failed to connect to [<HOST_1>]:29500 (errno: 22)",
        ),
        ("hostname=puffinia local_rank=3", "hostname=<HOST_1> local_rank=3"),
        ("+ torchrun --rdzv_endpoint=osprey:29400 train.py", "+ torchrun --rdzv_endpoint=<HOST_1>:29400 train.py"),
        ("MASTER_ADDR=godwit MASTER_PORT=29500", "MASTER_ADDR=<HOST_1> MASTER_PORT=29500"),
        ("USER=bivanova8", "USER=<USER_1>"),
        ("LOGNAME=chen.schmidt", "LOGNAME=<USER_1>"),
        (
            "uid=1000(jonas) gid=1000(jonas) groups=1000(jonas),27(sudo),998(docker)",
            "uid=1000(<USER_1>) gid=1000(<USER_1>) groups=1000(<USER_1>),27(sudo),998(docker)",
        ),
        (
            "slurmstepd: error: *** JOB 3567320 ON heron CANCELLED AT 2024-05-01T12:00:00 DUE TO TIME LIMIT ***",
            "slurmstepd: error: *** JOB 3567320 ON <HOST_1> CANCELLED AT 2024-05-01T12:00:00 DUE TO TIME LIMIT ***",
        ),
        (
            "*** STEP 5012471.0 ON osprey CANCELLED AT 2024-05-01T12:00:00 *** by btanaka",
            "*** STEP 5012471.0 ON <HOST_1> CANCELLED AT 2024-05-01T12:00:00 *** by <USER_1>",
        ),
        ("saving to /p/scratch/proj42/enguyen/ckpt", "saving to /p/scratch/proj42/<USER_1>/ckpt"),
        ('  File "/global/homes/b/brunotan/llm/train.py", line 42', '  File "/global/homes/b/<USER_1>/llm/train.py", line 42'),
        ("cd /home/CORP/luciagar/runs", "cd /home/CORP/<USER_1>/runs"),
        ("srun: error: kestrel: task 3: Exited with exit code 1", "srun: error: <HOST_1>: task 3: Exited with exit code 1"),
        ("  host      : condor", "  host      : <HOST_1>"),
        ("socket.gethostname() = merlin", "socket.gethostname() = <HOST_1>"),
        (
            "deepspeed.launcher.launch --world_info=eyJkZ3gtaDEwMC1iMDYiOiBbMCwgMV19 --master_port=29500",
            "deepspeed.launcher.launch --world_info=<HOST_1> --master_port=29500",
        ),
    ],
)
def test_when_an_identifying_value_stands_in_a_known_position_then_it_is_masked(text: str, expected: str) -> None:
    assert Redactor().redact_text(text) == expected


def test_when_a_line_teaches_a_host_then_it_is_masked_everywhere_also_before() -> None:
    text = "waiting for kestrel to join\nkestrel:3563:6329 [0] NCCL INFO cudaDriverVersion 12040\nssh kestrel nvidia-smi"
    masked = Redactor().redact_text(text)
    assert "kestrel" not in masked
    assert masked.split("\n")[0] == "waiting for <HOST_1> to join"


def test_when_a_host_is_taught_in_a_later_block_then_sweep_known_masks_the_earlier_one() -> None:
    redactor = Redactor()
    first = redactor.redact_text("waiting for kestrel to join")
    redactor.redact_text("kestrel:3563:6329 [0] NCCL INFO init")
    assert redactor.sweep_known(first) == "waiting for <HOST_1> to join"


@pytest.mark.parametrize(
    "text",
    [
        "nvidia-cublas-cu12          12.1.3.1",
        "nvidia-cudnn-cu12           8.9.2.26        pypi_0    pypi",
        "[rank4]:nvidia-nvjitlink-cu12       12.8.171.19     pypi_0    pypi",
        "nvidia-cusolver-cu12==11.4.5.107",
        "libcublas                 12.1.0.26                     0    nvidia",
        "Running benchmark on MI300X with batch size 8",
        "Using bf16 mixed precision on GH200",
        "Setting matmul precision to tf32",
        "Detected 8 GPUs on A100-SXM4-80GB",
        "compiled for H100-PCIE",
        "running on L40S",
        "HEAD is now at ba22316 fix loader",
        "MASTER_ADDR=localhost MASTER_PORT=29500",
        "hostname: localhost",
        "moving model to device cuda:3 on rank 3 at step 100",
        "GPU 1: 0000:3b:00.0 NVIDIA H100",
    ],
)
def test_when_a_line_only_looks_identifying_then_it_is_unchanged(text: str) -> None:
    assert Redactor().redact_text(text) == text


def test_when_an_address_follows_a_package_word_without_a_version_shape_then_it_is_still_masked() -> None:
    assert Redactor().redact_text("connect to 10.1.2.3 failed") == "connect to <IP_1> failed"
    assert Redactor().redact_text("inet 10.0.0.5/24 brd 10.0.0.255") == "inet <IP_1>/24 brd <IP_2>"
