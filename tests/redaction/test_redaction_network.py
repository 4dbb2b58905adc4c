"""IP addresses and e-mail addresses, and the look-alikes that must survive."""

from __future__ import annotations

import pytest

from redaction import Redactor

ROWS = [
    (
        "[W socket.cpp:663] [c10d] The client socket has failed to connect to [172.31.4.17]:29500 (errno: 111).",
        "[W socket.cpp:663] [c10d] The client socket has failed to connect to [<IP_1>]:29500 (errno: 111).",
    ),
    ("ssh: connect to host 198.51.100.23 port 22: Connection timed out", "ssh: connect to host <IP_1> port 22: Connection timed out"),
    (
        "[W socket.cpp:601] [c10d] The client socket has failed to connect to [2001:db8:85a3::8a2e:370:7334]:29500.",
        "[W socket.cpp:601] [c10d] The client socket has failed to connect to [<IP_1>]:29500.",
    ),
    (
        "node-03:2211:2211 [0] NCCL INFO Bootstrap : Using eth0:fe80::a00:27ff:fe4e:66a1%eth0<0>",
        "<HOST_1>:2211:2211 [0] NCCL INFO Bootstrap : Using eth0:<IP_1>%eth0<0>",
    ),
    ("#SBATCH --mail-user=carol.diaz@cs.example.edu", "#SBATCH --mail-user=<EMAIL_1>"),
    ("Author: Bob Okafor <bob.okafor@research.example.org>", "Author: <PERSON_1> <<EMAIL_1>>"),
    ("sent to a@example.com and b@example.com, again a@example.com", "sent to <EMAIL_1> and <EMAIL_2>, again <EMAIL_1>"),
]

NEGATIVE_ROWS = [
    "INFO:     Uvicorn running on http://0.0.0.0:8000 (Press CTRL+C to quit)",
    "store = TCPStore(host_name='127.0.0.1', port=29500, world_size=8, is_master=True)",
    "[W socket.cpp:464] [c10d] The server socket has started to listen on [::]:29500.",
    "cuDNN version: 8.9.2.26",
    "tensorrt 8.6.1.6",
    "| NVIDIA-SMI 535.104.05             Driver Version: 535.104.05   CUDA Version: 12.2     |",
    "NVRM: Xid (PCI:0000:3b:00): 79, pid=48213, name=python, GPU has fallen off the bus.",
    "frame #0: c10::Error::Error(c10::SourceLocation, std::string) + 0x57 (0x7f1b2c57a897 in libc10.so)",
    "Epoch 3:  42%|████▏     | 4200/10000 [1:02:11<1:25:50,  1.13it/s, loss=1.92, v_num=17]",
    "fatal: Could not read from remote repository. (git@github.com:huggingface/transformers.git)",
]


@pytest.mark.parametrize(("line", "expected"), ROWS)
def test_when_a_line_holds_an_address_then_it_is_masked(line: str, expected: str) -> None:
    assert Redactor().redact_line(line) == expected


@pytest.mark.parametrize("line", NEGATIVE_ROWS)
def test_when_a_line_holds_only_look_alikes_then_it_is_unchanged(line: str) -> None:
    assert Redactor().redact_line(line) == line
