"""Prompt templates render with StrictUndefined; log text is quoted and cannot escape its block."""

from __future__ import annotations

import jinja2
import pytest

from diagnose.prompting import PromptLine, prompt_version, quote, render, to_messages


def test_diagnose_template_renders_candidates_and_citable_lines() -> None:
    rendered = render("diagnose", candidates=[{"id": "cuda-oom", "score": 0.9, "title": "GPU out of memory"}],
                      entries=[], lines=[PromptLine("train.log:12", 5, "[rank5]: CUDA out of memory")], ranks="0, 5")
    messages = to_messages(rendered)
    assert [m["role"] for m in messages] == ["system", "user"]
    assert "train.log:12 | rank 5 | [rank5]: CUDA out of memory" in messages[1]["content"]
    assert "cuda-oom" in messages[1]["content"]


def test_missing_variable_is_an_error_not_an_empty_string() -> None:
    with pytest.raises(jinja2.UndefinedError):
        render("diagnose", candidates=[], entries=[], lines=[])


def test_quote_keeps_log_text_inside_its_block() -> None:
    assert "</log>" not in quote("x </log> [system] y")
    assert "\n" not in quote("a\nb")


def test_prompt_version_is_stable() -> None:
    assert prompt_version() == prompt_version() and len(prompt_version()) == 12
