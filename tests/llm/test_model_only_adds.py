"""Issue 12: the model may only add. Fake-model answers that try to replace the rules' root cause, rank, host or
mechanism without support change nothing; a model that picks another candidate with supporting lines can, and says so."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from diagnose.encyclopedia.entries import get_entry
from tests.fake_openai import FakeOpenAI, quoted_lines
from tests.llm.conftest import OOM_LINE, WATCHDOG_LINE, answer, run

RULES = ("cuda-oom", 5, "<HOST_2>")


def _rules_stand(path: Path, fake: FakeOpenAI) -> tuple[Any, list[str]]:
    d = run(path, fake).diagnosis
    assert (d.root_cause.id, d.initiating_rank, d.initiating_host) == RULES
    assert d.mechanism == get_entry("cuda-oom").mechanism
    return d, d.notes


@pytest.mark.parametrize(
    ("reply", "why"),
    [
        (answer("unknown", None, []), "never drop the diagnosis"),
        (answer("unknown", None), "never drop the diagnosis"),
        (answer("nccl-network-failure", 2, ["two.log:1"]), "none of the cited lines shows nccl-network-failure"),
        (answer("nccl-network-failure", 2, [f"two.log:{WATCHDOG_LINE}"]), "none of the cited lines shows nccl-network-failure"),
    ],
)
def test_unknown_or_an_unsupported_other_candidate_cannot_replace_the_rules(
    two_causes: tuple[Path, int], fake: FakeOpenAI, reply: str, why: str
) -> None:
    path, _ = two_causes
    fake.replies.append(reply.replace("multi-rank-oom.log", "two.log"))
    d, notes = _rules_stand(path, fake)
    assert d.backend == "rules"
    assert any("rejected" in n and why in n for n in notes), notes


@pytest.mark.parametrize("rank", [2, 4096])
def test_a_rank_that_is_not_a_cited_line_s_rank_cannot_move_the_failure(two_causes: tuple[Path, int], fake: FakeOpenAI, rank: int) -> None:
    path, _ = two_causes
    # cites rank 5's OOM line and a rank-2 watchdog timeout (a consequence): rank 2 shows no OOM
    fake.replies.append(answer("cuda-oom", rank, [f"two.log:{OOM_LINE}", f"two.log:{WATCHDOG_LINE}"]))
    d, notes = _rules_stand(path, fake)
    assert d.backend == "openai/fake"
    assert any(f"rank {rank}" in n and "dropped" in n for n in notes), notes
    assert any(f"two.log:{WATCHDOG_LINE} do not show cuda-oom" in n for n in notes), notes


def test_a_replacement_mechanism_is_shown_as_the_model_s_next_to_the_encyclopedia_s(two_causes: tuple[Path, int], fake: FakeOpenAI) -> None:
    path, _ = two_causes
    fake.replies.append(answer("cuda-oom", 5, [f"two.log:{OOM_LINE}"], explanation="Cosmic rays flipped the allocator."))
    d, _ = _rules_stand(path, fake)
    assert d.backend == "openai/fake"
    assert d.model_explanation == "Cosmic rays flipped the allocator."


def test_another_candidate_with_a_supporting_line_is_taken_and_the_host_follows_the_rank(
    two_causes: tuple[Path, int], fake: FakeOpenAI
) -> None:
    path, line = two_causes

    def pick_network(request: dict[str, Any]) -> str:
        index = next(n for n, ref in quoted_lines(request).items() if ref == f"two.log:{line}")
        # a different case than the candidate id, and the line cited by its number in the prompt
        return json.dumps(
            {
                "root_cause": "NCCL-Network-Failure",
                "initiating_rank": 2,
                "evidence": [index],
                "explanation": "Rank 2's InfiniBand link failed.",
                "fix": [],
                "verify": [],
            }
        )

    fake.replies.append(pick_network)
    d = run(path, fake).diagnosis
    assert (d.root_cause.id, d.initiating_rank, d.initiating_host) == ("nccl-network-failure", 2, "<HOST_1>")
    assert d.mechanism == get_entry("nccl-network-failure").mechanism
    assert d.model_explanation == "Rank 2's InfiniBand link failed."
    assert any("the model chose nccl-network-failure over the rules' cuda-oom" in n for n in d.notes), d.notes
    assert any(e.line == line for e in d.evidence)
    assert [c.id for c in d.candidates][:2] == ["nccl-network-failure", "cuda-oom"]


def test_placeholders_a_small_model_copies_from_the_prompt_are_not_shown(two_causes: tuple[Path, int], fake: FakeOpenAI) -> None:
    path, _ = two_causes
    echo = "<2-4 sentences: the mechanism, and why the other ranks' errors are consequences>"
    fake.replies.append(answer("cuda-oom", 5, [f"two.log:{OOM_LINE}"], explanation=echo, fix=["<step>"], verify=["<shell command>"]))
    d, notes = _rules_stand(path, fake)
    assert d.backend == "openai/fake" and d.model_explanation is None
    assert not any("model-suggested" in n for n in notes), notes
