"""The shipped gitleaks rules: conversion from Go syntax, secret groups, keyword gate, licence."""

from __future__ import annotations

import re
from importlib import resources

import pytest

from redaction.recognizers.gitleaks import GitleaksRecognizer, gitleaks_recognizers, load_rules, to_python_regex


def test_every_shipped_rule_compiles_as_python_and_has_an_id() -> None:
    rules = load_rules()
    assert len(rules) > 200
    for rule in rules:
        regex, flags = to_python_regex(rule["regex"])
        re.compile(regex, flags)
        assert rule["rule"]


def test_the_gitleaks_licence_ships_next_to_the_rules() -> None:
    notice = resources.files("redaction.data").joinpath("GITLEAKS-LICENSE").read_text("utf-8")
    assert "MIT License" in notice
    assert "Zachary Rice" in notice


@pytest.mark.parametrize(
    ("go_regex", "python_regex", "caseless"),
    [
        (r"(?i)abc", "abc", True),
        (r"\b(p8e-(?i)[a-z0-9]{32})", r"\b(p8e-[a-z0-9]{32})", True),
        (r"x[[:alnum:]]{4}\z", r"x[A-Za-z0-9]{4}\Z", False),
    ],
)
def test_go_only_syntax_is_converted(go_regex: str, python_regex: str, caseless: bool) -> None:
    assert to_python_regex(go_regex) == (python_regex, re.IGNORECASE if caseless else 0)


def _rule(rule_id: str) -> GitleaksRecognizer:
    return next(rec for rec in gitleaks_recognizers() if rec.rule_id == rule_id)


def test_the_secret_group_is_masked_and_the_key_name_kept() -> None:
    line = 'confluent_token: "3727zxjcay9ed5wm"'
    results = _rule("confluent-access-token").analyze(line)
    assert [line[r.start : r.end] for r in results] == ["3727zxjcay9ed5wm"]


def test_a_rule_without_its_keyword_nearby_finds_nothing() -> None:
    line = "commit 9c2f1e7a4b3d5c6e8f0a1b2c3d4e5f6a7b8c9d0e"
    assert _rule("sourcegraph-access-token").analyze(line) == []
    assert _rule("sourcegraph-access-token").analyze("sourcegraph " + line) != []


def test_secrets_ended_by_log_punctuation_are_found() -> None:
    line = "upload failed (key=dop_v1_60796998b89100e162ae937360640e07f5074204a286c08b8cce825fc4601a47), retrying"
    results = _rule("digitalocean-pat").analyze(line)
    assert [line[r.start : r.end] for r in results] == ["dop_v1_60796998b89100e162ae937360640e07f5074204a286c08b8cce825fc4601a47"]


def test_low_entropy_values_are_rejected_like_gitleaks_does() -> None:
    assert _rule("sentry-user-token").analyze("sntryu_" + "a" * 64) == []
