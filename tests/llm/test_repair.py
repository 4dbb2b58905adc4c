"""A reply cut at ``max_tokens`` is read up to its last complete field; nothing is invented."""

from __future__ import annotations

from pathlib import Path

import pytest

from diagnose.llm.repair import close_truncated
from tests.fake_openai import FakeOpenAI
from tests.llm.conftest import OOM, OOM_LINE, answer, run


@pytest.mark.parametrize(
    ("reply", "read"),
    [
        (
            '{"root_cause": "cuda-oom", "evidence": [4], "explanation": "Rank 5 ran o',
            {"root_cause": "cuda-oom", "evidence": [4], "explanation": "Rank 5 ran o"},
        ),
        ('{"root_cause": "cuda-oom", "evidence": [4], "fi', {"root_cause": "cuda-oom", "evidence": [4]}),
        ('{"root_cause": "cuda-oom", "evidence": [4], "fix":', {"root_cause": "cuda-oom", "evidence": [4]}),
        ('{"root_cause": "cuda-oom", "evidence": [4, 7', {"root_cause": "cuda-oom", "evidence": [4, 7]}),
        ('{"explanation": "a \\"quoted\\" word and a backslash \\', {"explanation": 'a "quoted" word and a backslash '}),
        ("I think it is an OOM.", None),
        ('{"root_cause": "cuda-oom", "evidence": [4]}', {"root_cause": "cuda-oom", "evidence": [4]}),
    ],
)
def test_close_truncated(reply: str, read: dict[str, object] | None) -> None:
    assert close_truncated(reply) == read


def test_an_answer_cut_inside_its_explanation_is_checked_and_used(fake: FakeOpenAI, tmp_path: Path) -> None:
    whole = answer("cuda-oom", 5, [f"{OOM.name}:{OOM_LINE}"], explanation="Rank 5 ran out of memory while upcasting the logits")
    fake.replies.append(whole[: whole.index("while")])  # what a server returns when max_tokens stops it
    d = run(OOM, fake).diagnosis
    assert d.backend == "openai/fake" and d.initiating_rank == 5
    assert d.model_explanation == "Rank 5 ran out of memory"
    assert any("cut at its token allowance" in n for n in d.notes)
