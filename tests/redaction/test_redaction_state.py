"""Carrying a session's placeholders to a later one (chat) without raw values; the unsure list."""

from __future__ import annotations

import json
import secrets

import pytest

from redaction import Redactor
from redaction.unsure import UnsureLog, looks_random

LOG = (
    "gpu-node-17:1234:5678 [0] NCCL INFO Bootstrap : Using eth0:10.1.2.3<0>\n"
    "kestrel:1234:5678 [0] NCCL INFO init\n"
    "HF_TOKEN=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\n"
    '  File "/home/dfischer/train.py", line 3\n'
    "-----BEGIN PRIVATE KEY-----\nMIIEvQIBADANBgkqhkiG9w0BAQEFAASC\n-----END PRIVATE KEY-----"
)
RAW = ["gpu-node-17", "kestrel", "10.1.2.3", "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", "dfischer", "MIIEvQIBADANBgkqhkiG9w0BAQEFAASC"]


@pytest.fixture
def state() -> dict:
    redactor = Redactor()
    redactor.redact_text(LOG)
    return redactor.export_state()


def test_the_exported_state_is_json_and_holds_no_raw_value(state: dict) -> None:
    dumped = json.dumps(state)
    assert json.loads(dumped) == state
    for raw in RAW:
        assert raw not in dumped
        assert raw.lower() not in dumped


def test_when_a_question_names_a_value_the_log_masked_then_it_gets_the_logs_placeholder(state: dict) -> None:
    log_redactor = Redactor()
    masked_log = log_redactor.redact_text(LOG)
    question = Redactor.from_state(log_redactor.export_state()).redact_text(
        "why did kestrel and gpu-node-17 fail? is 10.1.2.3 the master? did dfischer leak 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?"
    )
    for raw in RAW[:5]:
        assert raw not in question
    for placeholder in ("<HOST_1>", "<HOST_2>", "<IP_1>", "<TOKEN_1>", "<USER_1>"):
        assert placeholder in masked_log
        assert placeholder in question
    assert question.startswith("why did <HOST_2> and <HOST_1> fail?")


def test_when_a_question_names_a_new_value_then_its_number_follows_the_logs(state: dict) -> None:
    restored = Redactor.from_state(state)
    masked = restored.redact_text("is MASTER_ADDR=node-99 the same as gpu-node-17? and a new key -----BEGIN PRIVATE KEY-----")
    assert "MASTER_ADDR=<HOST_3>" in masked
    assert "<HOST_1>?" in masked
    assert "<PRIVATE_KEY_2>" in masked


def test_when_a_question_cites_a_placeholder_of_the_log_then_it_stays_a_reference(state: dict) -> None:
    assert Redactor.from_state(state).redact_text("what happened on <HOST_1>?") == "what happened on <HOST_1>?"


def test_a_state_survives_a_round_trip_through_json_twice(state: dict) -> None:
    once = Redactor.from_state(json.loads(json.dumps(state)))
    once.redact_text("MASTER_ADDR=node-99")
    twice = Redactor.from_state(json.loads(json.dumps(once.export_state())))
    assert twice.redact_text("node-99 and kestrel") == "<HOST_3> and <HOST_2>"


def test_a_state_of_another_version_is_refused(state: dict) -> None:
    with pytest.raises(ValueError, match="version"):
        Redactor.from_state({**state, "version": 99})


def test_states_of_two_sessions_use_different_keys() -> None:
    a, b = Redactor(), Redactor()
    a.redact_text("MASTER_ADDR=node-1")
    b.redact_text("MASTER_ADDR=node-1")
    assert a.export_state()["key"] != b.export_state()["key"]
    assert a.export_state()["values"] != b.export_state()["values"]


def test_when_a_random_value_stands_where_no_recognizer_looks_then_it_is_listed_as_unsure() -> None:
    value = secrets.token_urlsafe(24)
    while not looks_random(value):
        value = secrets.token_urlsafe(24)
    redactor = Redactor()
    masked = redactor.redact_text(f"step 1\nfoo {value} bar\ncommit 55df3aaa52b11d43d60b9600c11b916220b67982")
    assert value in masked
    assert [(u.line_no, value in u.snippet) for u in redactor.unsure] == [(2, True)]
    assert redactor.unsure_total == 1
    assert value not in json.dumps(redactor.export_state())


@pytest.mark.parametrize(
    "line",
    [
        "commit 55df3aaa52b11d43d60b9600c11b916220b67982",
        "sha256=dc41ece7f4ab4a9086e0bfc4cd1e365e764c5ae9d8db99d7c49f6b0483946d75",
        "run id 0b3c5a2e-9f1d-4c3b-8a7e-2d6f1e0c9b8a",
        "torch_distributed_elastic_multiprocessing_errors",
        "model-00001-of-00004.safetensors",
        "HF_TOKEN=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",
        "epoch=0/micro_step=80/global_step=10, RunningAvgSamplesPerSec=41.0454227952",
        "python finetune.py --base mistralai/Mistral-7B-v0.1 --load_in_4bit",
        "export NCCL_SOCKET_IFNAME=bond0 NCCL_IB_HCA=mlx5",
    ],
)
def test_hashes_names_and_masked_values_are_not_unsure(line: str) -> None:
    redactor = Redactor()
    redactor.redact_text(line)
    assert redactor.unsure == []


def test_the_unsure_list_is_bounded_and_counts_the_rest() -> None:
    redactor = Redactor()
    values = []
    while len(values) < UnsureLog.LIMIT + 5:
        value = secrets.token_urlsafe(24)
        if looks_random(value):
            values.append(value)
    redactor.redact_text("\n".join(f"x {v}" for v in values))
    assert len(redactor.unsure) == UnsureLog.LIMIT
    assert redactor.unsure_total == UnsureLog.LIMIT + 5
    assert [u.line_no for u in redactor.unsure] == list(range(1, UnsureLog.LIMIT + 1))
