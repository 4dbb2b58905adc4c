"""User names in home paths and bucket names in object-store URIs."""

from __future__ import annotations

import pytest

from redaction import Redactor

ROWS = [
    (
        '  File "/home/alice/projects/llm/train.py", line 211, in <module>',
        '  File "/home/<USER_1>/projects/llm/train.py", line 211, in <module>',
    ),
    (
        "FileNotFoundError: [Errno 2] No such file or directory: '/Users/bob/data/shards/train-00042.arrow'",
        "FileNotFoundError: [Errno 2] No such file or directory: '/Users/<USER_1>/data/shards/train-00042.arrow'",
    ),
    (
        "C:\\Users\\frank\\miniconda3\\envs\\ml\\lib\\site-packages\\torch\\cuda\\__init__.py:141: UserWarning",
        "C:\\Users\\<USER_1>\\miniconda3\\envs\\ml\\lib\\site-packages\\torch\\cuda\\__init__.py:141: UserWarning",
    ),
    ("HF_HOME=/home/eve.martin/.cache/huggingface", "HF_HOME=/home/<USER_1>/.cache/huggingface"),
    ("Saving checkpoint to s3://acme-ml-private-ckpts/ckpt/step_100", "Saving checkpoint to s3://<BUCKET_1>/ckpt/step_100"),
    ("fsspec: listing gs://proj-llm-tokenized-v3/shards/*.bin (1024 files)", "fsspec: listing gs://<BUCKET_1>/shards/*.bin (1024 files)"),
    (
        "The specified container does not exist. (abfss://ckpts@mlstorageacct01.dfs.core.windows.net/sft/)",
        "The specified container does not exist. (abfss://<BUCKET_1>.dfs.core.windows.net/sft/)",
    ),
    (
        "Downloading https://acme-ml-private-ckpts.s3.us-west-2.amazonaws.com/llama/model.safetensors (13.5 GB)",
        "Downloading https://<BUCKET_1>.s3.us-west-2.amazonaws.com/llama/model.safetensors (13.5 GB)",
    ),
    (
        "GET https://storage.googleapis.com/acme-private-evals/mmlu/test.jsonl -> 403 Forbidden",
        "GET https://storage.googleapis.com/<BUCKET_1>/mmlu/test.jsonl -> 403 Forbidden",
    ),
]

NEGATIVE_ROWS = [
    '  File "/usr/lib/python3.10/threading.py", line 1016, in _bootstrap_inner',
    '  File "/opt/conda/lib/python3.10/site-packages/torch/distributed/distributed_c10d.py", line 2050, in all_reduce',
    '  File "/root/.cache/huggingface/modules/transformers_modules/modeling_custom.py", line 88, in forward',
    "Error file: /tmp/torchelastic_x8k2_1kq/none_3a9d0e2f/attempt_0/3/error.json",
]


@pytest.mark.parametrize(("line", "expected"), ROWS)
def test_when_a_path_names_a_user_or_bucket_then_only_that_part_is_masked(line: str, expected: str) -> None:
    assert Redactor().redact_line(line) == expected


@pytest.mark.parametrize("line", NEGATIVE_ROWS)
def test_when_a_path_names_nobody_then_it_is_unchanged(line: str) -> None:
    assert Redactor().redact_line(line) == line
