"""Test data shared by the web tests: a log with planted secrets, and the fake model's replies."""

from __future__ import annotations

from typing import Any

from tests.fake_openai import top_candidate_reply

from .conftest import EXAMPLE_OOM

PLANTED_LINES = """\
+ export HF_TOKEN=hf_ZpQ7rT2mXw9LkV4nB8cJd3FgHs6YuA1eRt
+ export AWS_ACCESS_KEY_ID=AKIAQ4XW7PLMZ2RTY8KN
+ export AWS_SECRET_ACCESS_KEY=Jx8vR2nQ7mK4pL9sT3wY6zB1cD5fG0hA2eU7iO4k
+ export OPENAI_API_KEY=sk-proj-Tq8Wm3Zr7Yx2Kp5Lv9Nb4Hc6Jd1Fg0Se
[rank0]: contact carol.secret@acme-research.example for access
[rank0]: DATABASE_URL=postgresql://trainer:Sup3rS3cretPw!@db-01:5432/runs
[rank0]: master_addr=trn-login-07.hpc.acme-research.example
[rank0]: loading /home/dmitri_k/datasets/shard-0001.bin
"""
SECRETS = [
    "hf_ZpQ7rT2mXw9LkV4nB8cJd3FgHs6YuA1eRt",
    "AKIAQ4XW7PLMZ2RTY8KN",
    "Jx8vR2nQ7mK4pL9sT3wY6zB1cD5fG0hA2eU7iO4k",
    "sk-proj-Tq8Wm3Zr7Yx2Kp5Lv9Nb4Hc6Jd1Fg0Se",
    "carol.secret@acme-research.example",
    "Sup3rS3cretPw!",
    "trn-login-07.hpc.acme-research.example",
    "dmitri_k",
    # already in the example log
    "hf_QbXkTnWmLpRsVaYcZdEfGhJkMnPq1234",
    "2f4b9c1e8a7d6f5e4c3b2a1908f7e6d5c4b3a291",
    "gpu-node-017.cluster.internal",
    "10.12.8.17",
    "acme-llm-ckpts",
]


def planted_log() -> str:
    """The multi-rank OOM example with more secrets after its third line."""
    lines = EXAMPLE_OOM.read_text(encoding="utf-8").splitlines(keepends=True)
    return "".join(lines[:3]) + PLANTED_LINES + "".join(lines[3:])


CHAT_REPLY = "Rank 5 ran out of GPU memory first [upload.log:211]; the others timed out waiting, see [kb:cuda-oom#Fix]."


def fake_model(request: dict[str, Any]) -> str:
    """Streamed requests are follow-ups; the others ask for the diagnosis JSON."""
    return CHAT_REPLY if request.get("stream") else top_candidate_reply(request)
