"""Consistent pseudonyms, counts, and no collision with placeholder-shaped input."""

from __future__ import annotations

import re

from redaction import Redacted, Redactor, redact
from redaction.placeholders import PLACEHOLDER_RE, Pseudonyms


def test_when_values_repeat_then_each_keeps_its_number_per_type() -> None:
    pseudonyms = Pseudonyms()
    assert pseudonyms.placeholder("HOST", "node07") == "<HOST_1>"
    assert pseudonyms.placeholder("HOST", "node08") == "<HOST_2>"
    assert pseudonyms.placeholder("IP", "10.0.0.1") == "<IP_1>"
    assert pseudonyms.placeholder("HOST", "NODE07") == "<HOST_1>"
    assert pseudonyms.placeholder("TOKEN", "AbC") != pseudonyms.placeholder("TOKEN", "abc")
    assert dict(pseudonyms.counts) == {"HOST": 3, "IP": 1, "TOKEN": 2}


def test_when_lines_mention_the_same_host_then_rank_and_host_still_correlate(redactor: Redactor) -> None:
    text = "\n".join(
        [
            "rank 5 on node-17.cluster.internal started",
            "rank 6 on node-18.cluster.internal started",
            "NCCL WARN rank 5 on node-17.cluster.internal: connection closed by 10.0.0.6",
        ]
    )
    assert redactor.redact_text(text).split("\n") == [
        "rank 5 on <HOST_1> started",
        "rank 6 on <HOST_2> started",
        "NCCL WARN rank 5 on <HOST_1>: connection closed by <IP_1>",
    ]
    assert redactor.counts == {"HOST": 3, "IP": 1}


def test_when_the_input_already_holds_a_placeholder_then_new_ones_skip_its_number(redactor: Redactor) -> None:
    masked = redactor.redact_text("previously masked: <HOST_1> and <IP_2>\nMASTER_ADDR=node07.cluster.internal 10.0.0.9 10.0.0.8")
    assert masked.split("\n") == [
        "previously masked: <HOST_1> and <IP_2>",
        "MASTER_ADDR=<HOST_2> <IP_1> <IP_3>",
    ]


def test_when_placeholder_text_arrives_after_that_number_was_issued_then_it_is_escaped(redactor: Redactor) -> None:
    assert redactor.redact_line("MASTER_ADDR=node07.cluster.internal") == "MASTER_ADDR=<HOST_1>"
    assert redactor.redact_line("a user wrote <HOST_1> by hand") == "a user wrote <_HOST_1> by hand"
    assert redactor.redact_line("and <HOST_9> is still free") == "and <HOST_9> is still free"


def test_when_text_is_masked_then_every_placeholder_in_it_was_issued_by_this_session(redactor: Redactor) -> None:
    text = "<HOST_1>: hello\nnode07: token=abc123XYZ789secret from 10.1.2.3\n<HOST_1> again"
    masked = redactor.redact_text(text)
    issued = [m.group(0) for m in PLACEHOLDER_RE.finditer(masked)]
    literal = "<HOST_1>"
    assert masked.count(literal) == 2
    assert set(issued) - {literal} == {"<HOST_2>", "<TOKEN_1>", "<IP_1>"}


def test_redact_returns_masked_text_and_counts_but_no_mapping() -> None:
    result = redact("contact alice@example.com or bob@example.com about /home/alice/run")
    assert isinstance(result, Redacted)
    assert result.text == "contact <EMAIL_1> or <EMAIL_2> about /home/<USER_1>/run"
    assert result.counts == {"EMAIL": 2, "USER": 1}
    assert "alice" not in repr(result)


def test_placeholder_shape_is_upper_snake_with_a_number() -> None:
    masked = redact("-----BEGIN RSA PRIVATE KEY-----\nMIIEowIBAAKCAQEA\n-----END RSA PRIVATE KEY-----").text
    assert re.fullmatch(r"(<PRIVATE_KEY_1>\n){2}<PRIVATE_KEY_1>", masked)
