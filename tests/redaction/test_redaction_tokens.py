"""Credentials: bearer tokens, JWTs, URL passwords, keyword secrets, provider formats."""

from __future__ import annotations

import pytest

from redaction import Redactor

ROWS = [
    ("Authorization: Bearer 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", "Authorization: Bearer <TOKEN_1>"),
    (
        'curl -H "Authorization: Bearer eyJhbGciOiJSUzI1NiIsInR5cCI6IkpXVCJ9.eyJzdWIiOiJzdmMifQ.vRJW7kQjU_Nd-dOX4D1ZJza_2kyli53L"',
        'curl -H "Authorization: Bearer <TOKEN_1>"',
    ),
    (
        "https://oauth2:glpat-WNZTp0AOD9CVHck9hFbW@gitlab.example.com/ml/data-tools.git/",
        "https://<USER_1>:<TOKEN_1>@<HOST_1>/ml/data-tools.git/",
    ),
    (
        "could not connect to server (url=postgres://mlflow:Tr41n!ngDB@db.internal:5432/mlflow)",
        "could not connect to server (url=postgres://<USER_1>:<PASSWORD_1>@<HOST_1>:5432/mlflow)",
    ),
    (
        "Error 111 connecting to redis://:hunter2redis@cache-0.cache.svc:6379/0.",
        "Error 111 connecting to redis://:<PASSWORD_1>@<HOST_1>:6379/0.",
    ),
    ("WANDB_API_KEY=3cdacfc8448fb67eb5ef08bab1da3fd7bd099b9b", "WANDB_API_KEY=<TOKEN_1>"),
    (
        "+ huggingface-cli login --token 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 --add-to-git-credential",
        "+ huggingface-cli login --token <TOKEN_1> --add-to-git-credential",
    ),
    ("AWS_ACCESS_KEY_ID=AKIABW2A5CR3H73UQAWP", "AWS_ACCESS_KEY_ID=<TOKEN_1>"),
    ("AWS_SECRET_ACCESS_KEY=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", "AWS_SECRET_ACCESS_KEY=<TOKEN_1>"),
    ("OPENAI_API_KEY=sk-proj-mP6JMnNI9_LL9QkB6u_yfIeN0F5OSA4-X4X8Sy3gokF2nMgm", "OPENAI_API_KEY=<TOKEN_1>"),
    ("alerts: posting to https://hooks.slack.com/services/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", "alerts: posting to <TOKEN_1>"),
    ('secret_key: "zGsefe/DzCsX/E0cY/MN3IrLQlDBzRpRX+pkUuDB"', 'secret_key: "<TOKEN_1>"'),
    (
        "wandb.errors.AuthenticationError: API key d29e12872b55abf524be8456a871d846a5f7c53c is invalid",
        "wandb.errors.AuthenticationError: API key <TOKEN_1> is invalid",
    ),
    ("token=abc123XYZ789secret then token=abc123XYZ789secret", "token=<TOKEN_1> then token=<TOKEN_1>"),
]

NEGATIVE_ROWS = [
    "401 Unauthorized: Authorization header missing or malformed (expected 'Bearer <token>')",
    "wandb: WARNING WANDB_API_KEY not set; wandb is running in offline mode",
    "Git commit: 9c2f1e7a4b3d5c6e8f0a1b2c3d4e5f6a7b8c9d0e (branch main, clean)",
    "transformers @ git+https://github.com/huggingface/transformers.git@3f94c1a9d1b2e4f0a8c7e6d5b4a3f2e1d0c9b8a7",
    "hf_device_map: {'model.embed_tokens': 0, 'model.layers.0': 0, 'lm_head': 1}",
    "KeyError: 'layer_norm_eps2'",
    "KeyError: 'model.layers.31.mlp.gate_proj.weight'",
    "tokenizer: LlamaTokenizerFast(name_or_path='meta-llama/Llama-2-7b-hf', vocab_size=32000)",
    "Found 2 keys: model-00001-of-00002.safetensors",
    "Successfully installed accelerate-0.30.1 tokenizers-0.19.1 transformers-4.40.1",
    "step 12000/500000 | loss 2.1873 | lr 3.000E-04 | tokens/s 152,311 | mfu 41.2%",
    "use_cache: True, pad_token_id: 0, bos_token_id: 1, eos_token_id: 2",
    "api_key: ${OPENAI_API_KEY}",
    "PyTorch version: 2.3.0a0+git6ddf5cf",
]


@pytest.mark.parametrize(("line", "expected"), ROWS)
def test_when_a_line_holds_a_credential_then_only_the_credential_is_masked(line: str, expected: str) -> None:
    assert Redactor().redact_line(line) == expected


@pytest.mark.parametrize("line", NEGATIVE_ROWS)
def test_when_a_line_holds_a_credential_look_alike_then_it_is_unchanged(line: str) -> None:
    assert Redactor().redact_line(line) == line
