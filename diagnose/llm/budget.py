"""How much to ask and how much to let a model write: the answer's JSON schema, its token allowance, the prompt's room.

The schema constrains decoding where the server supports it (llama.cpp, vLLM, Ollama, OpenAI):
the root cause is an enum of this log's candidate ids, cited lines are the numbers of the quoted
lines that show a candidate, the rank one of those lines' ranks, so even a small model cannot name
what does not exist. ``max_tokens`` is sized to that answer; the log windows fit what the model's context
window leaves after the instructions, the encyclopedia excerpts and the answer.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from diagnose.settings import Settings

MAX_CITED = 5
EXPLANATION_TOKENS = 160
STEP_TOKENS = 40
STEPS = 4
FAST_WINDOW_TOKENS = 2000
FAST_CANDIDATES = 3
MAX_CANDIDATES = 5
INSTRUCTION_TOKENS = 600
SAFETY = 0.75
"""Share of the context window the estimated prompt may take: the estimate (4 characters a token) runs low on logs."""


@dataclass(frozen=True)
class Budget:
    """What one diagnosis request may use."""

    window_tokens: int
    answer_tokens: int
    candidates: int
    context: int


def answer_tokens(settings: Settings) -> int:
    """The token allowance of a diagnosis answer: the schema's fields at their intended sizes, plus JSON syntax."""
    if settings.max_tokens:
        return settings.max_tokens
    steps = 2 if settings.fast else STEPS
    return 60 + 4 * MAX_CITED + EXPLANATION_TOKENS + 2 * steps * STEP_TOKENS


def plan(settings: Settings, context: int, excerpt_chars: int) -> Budget:
    """The budget for a model with ``context`` tokens, given the encyclopedia excerpts' length."""
    answer = answer_tokens(settings)
    wanted = FAST_WINDOW_TOKENS if settings.fast else settings.token_budget
    room = int((context - answer) * SAFETY) - INSTRUCTION_TOKENS - excerpt_chars // 4
    return Budget(
        window_tokens=max(min(wanted, room), 200),
        answer_tokens=answer,
        candidates=FAST_CANDIDATES if settings.fast else MAX_CANDIDATES,
        context=context,
    )


def answer_schema(candidate_ids: list[str], citable: list[int], ranks: list[int]) -> dict[str, Any]:
    """The JSON schema of a diagnosis answer for this prompt (strict: every field required, nothing else allowed).

    ``citable``: the numbers of the quoted lines that may be cited; ``ranks``: the ranks of those lines.
    """
    cited: dict[str, Any] = {"type": "integer", "enum": citable} if citable else {"type": "integer"}
    rank: dict[str, Any] = {"anyOf": [{"type": "integer", "enum": sorted(set(ranks))}, {"type": "null"}]} if ranks else {"type": "null"}
    strings = {"type": "array", "items": {"type": "string"}}
    return {
        "type": "object",
        "properties": {
            "root_cause": {"type": "string", "enum": candidate_ids},
            "initiating_rank": rank,
            "evidence": {"type": "array", "items": cited},
            "explanation": {"type": "string"},
            "fix": strings,
            "verify": strings,
        },
        "required": ["root_cause", "initiating_rank", "evidence", "explanation", "fix", "verify"],
        "additionalProperties": False,
    }
