"""Shapes found leaking or mangled in the eval suite, pinned so they stay fixed."""

from __future__ import annotations

import base64
import random

import pytest

from redaction import Redactor
from redaction.recognizers.multiline import KubeSecretDataRecognizer


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("wandb: logged in as alice.nguyen@example.com", "wandb: logged in as <EMAIL_1>"),
        ("wandb: Currently logged in as: alice-nguyen (acme-research)", "wandb: Currently logged in as: <USER_1> (<USER_2>)"),
        ("saved checkpoint to /lustre/fsw/rsubramanian/ckpt/gpt13b", "saved checkpoint to /lustre/fsw/<USER_1>/ckpt/gpt13b"),
        ("reading /fsx/datasets/c4/train-0001.json", "reading /fsx/datasets/c4/train-0001.json"),
        ("stream closed: EOF for ml-team-emea/whisper-ft-nl-worker-0 (pytorch)", "stream closed: EOF for <NAMESPACE_1>/<HOST_1> (pytorch)"),
        ('Pod "x" in namespace "research-cdiaz" terminated', 'Pod "x" in namespace "<NAMESPACE_1>" terminated'),
        ("namespace: default", "namespace: default"),
        (
            "Warning OOMKilling node/gke-gpu-l4-pool-7c1d2e-9vxt Memory cgroup out of memory",
            "Warning OOMKilling node/<HOST_1> Memory cgroup out of memory",
        ),
    ],
)
def test_when_shape_seen_in_evals_then_masked_whole(text: str, expected: str) -> None:
    assert Redactor().redact_line(text) == expected


def test_when_digitless_host_prefixes_many_lines_then_it_is_masked() -> None:
    lines = [f"gpu-node-a: step {i} loss 2.0" for i in range(6)] + ["gpu-node-a: torch.cuda.OutOfMemoryError: CUDA out of memory."]
    masked = Redactor().redact_text("\n".join(lines)).split("\n")
    assert all(line.startswith("<HOST_1>: ") for line in masked)


def test_when_a_logger_name_prefixes_few_lines_then_it_survives() -> None:
    text = "data-loader: loaded 12 shards\nstep 1 loss 2.0\ndata-loader: loaded 3 shards"
    assert Redactor().redact_text(text) == text


@pytest.mark.parametrize(
    "text",
    [
        "EJ0001: 2024-05-21-11:57:54.167.645 Failed to initialize the HCCP process.",
        "[rank1]: EE9999: Inner Error!",
    ],
)
def test_when_an_ascend_error_code_starts_a_line_then_it_survives(text: str) -> None:
    assert Redactor().redact_text(text) == text


def test_when_a_kubernetes_secret_holds_many_keys_then_every_value_is_masked_alike_on_both_prefilters() -> None:
    """Only the first keys under ``data:`` were masked (a match started at the header and consumed it), and the
    Python prefilter, which reports non-overlapping matches, picked other candidate lines than Hyperscan. Fresh values
    each run; the only ones allowed through are those the recognizer takes for a name (digitless, CamelCase-like:
    about 2 in 10,000 random values)."""
    rng = random.Random()
    values = [base64.b64encode(rng.randbytes(rng.randint(12, 40))).decode() for _ in range(9)]
    names = ["username", "password", "region", "config.json", "endpoint", "ca.crt", "other", "db-url", "tls.key"]
    manifest = ["apiVersion: v1", "data:", *(f"  {name}: {value}" for name, value in zip(names, values, strict=True)), "kind: Secret"]
    text = "\n".join(f"[rank2]:{line}" for line in manifest)
    masked = Redactor(use_hyperscan=True).redact_text(text)
    assert Redactor(use_hyperscan=False).redact_text(text) == masked
    word_like = [value for value in values if KubeSecretDataRecognizer().validate_result(value) is False]
    assert [value for value in values if value in masked] == word_like
    assert masked.count("<TOKEN_") == len(values) - len(word_like)
