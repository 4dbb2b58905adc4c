"""SLURM users, W&B entities and commit authors."""

from __future__ import annotations

import pytest

from redaction import Redactor

ROWS = [
    ("SLURM_JOB_USER=alee", "SLURM_JOB_USER=<USER_1>"),
    (
        "JobId=4415123 JobName=llm-pretrain UserId=bkowalski(10342) GroupId=ml(5001) MCS_label=N/A",
        "JobId=4415123 JobName=llm-pretrain UserId=<USER_1>(10342) GroupId=ml(5001) MCS_label=N/A",
    ),
    ("+ squeue -u gfarah -o '%.18i %.9P %.30j'", "+ squeue -u <USER_1> -o '%.18i %.9P %.30j'"),
    (
        "  4415123       gpu llm-pret  cmartin  R 2-03:14:07      8 node-[017-024]",
        "  4415123       gpu llm-pret  <USER_1>  R 2-03:14:07      8 <HOST_1>",
    ),
    (
        "4415123.0        python    ml-proj     dsingh         64     FAILED      1:0",
        "4415123.0        python    ml-proj     <USER_1>         64     FAILED      1:0",
    ),
    (
        "slurmstepd: error: Detected 1 oom_kill event in StepId=4415123.0 (user kpatel).",
        "slurmstepd: error: Detected 1 oom_kill event in StepId=4415123.0 (user <USER_1>).",
    ),
    (
        "wandb: 🚀 View run glorious-sun-17 at: https://wandb.ai/alice-ng/llm-pretrain/runs/3kx9z2ab",
        "wandb: 🚀 View run glorious-sun-17 at: https://wandb.ai/<USER_1>/llm-pretrain/runs/3kx9z2ab",
    ),
    (
        "wandb: Currently logged in as: carol-diaz (acme-research). Use `wandb login --relogin` to force relogin",
        "wandb: Currently logged in as: <USER_1> (<USER_2>). Use `wandb login --relogin` to force relogin",
    ),
    ('{"type": "user", "fullname": "Dmitri V", "orgs": []}', '{"type": "user", "fullname": "<PERSON_1>", "orgs": []}'),
]

NEGATIVE_ROWS = [
    "SLURM_JOB_ID=4415123 SLURM_NTASKS=64 SLURM_PROCID=12 SLURM_LOCALID=4",
    "slurmstepd: error: Detected 1 oom_kill event in StepId=4415123.0. Some of your processes may have been killed.",
    "wandb: Tracking run with wandb version 0.16.6",
]


@pytest.mark.parametrize(("line", "expected"), ROWS)
def test_when_a_line_names_an_account_or_person_then_it_is_masked(line: str, expected: str) -> None:
    assert Redactor().redact_line(line) == expected


@pytest.mark.parametrize("line", NEGATIVE_ROWS)
def test_when_a_line_names_nobody_then_it_is_unchanged(line: str) -> None:
    assert Redactor().redact_line(line) == line
