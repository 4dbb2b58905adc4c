"""Prompt templates render with StrictUndefined; log text is quoted and cannot escape its block."""

from __future__ import annotations

from pathlib import Path

import jinja2
import pytest

from diagnose.llm.prompting import CHARS_PER_TOKEN, PromptLine, prompt_version, quote, render, to_messages, window_lines


def test_diagnose_template_renders_candidates_and_citable_lines() -> None:
    rendered = render(
        "diagnose",
        candidates=[{"id": "cuda-oom", "score": 0.9, "title": "GPU out of memory"}],
        entries=[],
        lines=[PromptLine("train.log:12", 5, "[rank5]: CUDA out of memory")],
        ranks="0, 5",
    )
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


def test_prompt_stays_within_the_token_budget_whatever_the_log_size(tmp_path: Path) -> None:
    from bench.generate_log import generate
    from diagnose.encyclopedia.entries import load_entries
    from diagnose.engine.candidates import score_candidates
    from diagnose.engine.hangs import analyse_hang
    from diagnose.llm.diagnosis import build_messages
    from diagnose.parse.ingest import resolve_sources
    from diagnose.pipeline import diagnose
    from diagnose.settings import load_settings

    truth = generate(str(tmp_path / "big.log"), size_mb=4, ranks=256)
    result = diagnose(resolve_sources([truth["path"]]), settings=load_settings())
    entries = {e.id: e for e in load_entries()}
    ranked = score_candidates(result.log, entries, analyse_hang(result.log))

    anchors = [f.evidence for f in result.log.findings]  # hundreds of timeouts: far more than fits
    assert len(anchors) > 200
    small, large = window_lines(result.log, anchors, 500), window_lines(result.log, anchors, 6000)
    for budget, lines in ((500, small), (6000, large)):
        assert sum(len(x.ref) + len(x.text) + 12 for x in lines) <= budget * CHARS_PER_TOKEN
    assert len(small) < len(large)
    prompt = "".join(m["content"] for m in build_messages(result.diagnosis, result.log, ranked, entries, 6000))
    assert "torch.OutOfMemoryError" in prompt
    assert len(prompt) <= 6000 * CHARS_PER_TOKEN + 4000  # the instructions and entry excerpts come on top


def test_messages_alternate_for_strict_chat_templates() -> None:
    rendered = (
        "[system]\nS\n[user]\ncontext\n[user]\nq1\n[assistant]\n\n[user]\nq2\n[assistant]\na\n[assistant]\nb\n[user]\nq3\n[assistant]\n"
    )
    messages = to_messages(rendered)
    assert [m["role"] for m in messages] == ["system", "user", "assistant", "user"]
    assert messages[1]["content"] == "context\n\nq1\n\nq2" and messages[2]["content"] == "a\n\nb"


def test_diagnose_prompt_numbers_its_lines_for_citation() -> None:
    rendered = render(
        "diagnose", candidates=[], entries=[], ranks="0", lines=[PromptLine("a.log:7", 0, "x"), PromptLine("a.log:9", 1, "y")]
    )
    assert "[1] a.log:7 | rank 0 | x" in rendered and "[2] a.log:9 | rank 1 | y" in rendered
