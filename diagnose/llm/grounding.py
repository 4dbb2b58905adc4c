"""Check a model's diagnosis against what exists: the candidate ids, the log's lines, its ranks, the entry.

What fails a check is dropped, and each drop is reported; when the core of the answer
(the root cause, or every cited line) fails, the whole answer is rejected.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field

from diagnose.encyclopedia.entries import Entry
from diagnose.parse.parsed_log import ParsedLog

EXPLANATION_CHARS = 2000
_REF = re.compile(r"^(?P<file>.+):(?P<line>\d+)$")


@dataclass
class ModelAnswer:
    """The model's answer after grounding: what survived and what was dropped."""

    root_cause: str
    initiating_rank: int | None
    evidence: list[tuple[str, int]]
    explanation: str
    suggested: list[str] = field(default_factory=list)
    dropped: list[str] = field(default_factory=list)


class Rejected(Exception):
    """The model's answer cannot be used; the message says why."""


def parse_json_object(text: str) -> dict[str, object]:
    """The first JSON object in a reply (models sometimes wrap it in prose or a code fence)."""
    start = text.find("{")
    end = text.rfind("}")
    if start < 0 or end <= start:
        raise Rejected("the reply holds no JSON object")
    try:
        data = json.loads(text[start:end + 1])
    except json.JSONDecodeError as exc:
        raise Rejected(f"the reply is not valid JSON ({exc.msg})") from exc
    if not isinstance(data, dict):
        raise Rejected("the reply is not a JSON object")
    return data


def _refs(raw: object, log: ParsedLog) -> tuple[list[tuple[str, int]], list[str]]:
    kept: list[tuple[str, int]] = []
    dropped: list[str] = []
    items = raw if isinstance(raw, list) else []
    default_source = log.sources[0] if len(log.sources) == 1 else None
    for item in items[:20]:
        text = str(item).strip().strip("[]")
        match = _REF.match(text)
        source, number = (match.group("file"), int(match.group("line"))) if match else (default_source, int(text) if text.isdigit() else -1)
        if source is not None and log.has_line(source, number):
            kept.append((source, number))
        else:
            dropped.append(f"cited line {text!r} is not in the log")
    return kept, dropped


def _commands(raw: object) -> list[str]:
    return [str(x).strip() for x in raw if str(x).strip()][:10] if isinstance(raw, list) else []


def ground(reply: str, log: ParsedLog, candidate_ids: list[str], entries: dict[str, Entry]) -> ModelAnswer:
    """Validate a diagnosis reply; raise Rejected when its root cause or all its evidence fail."""
    data = parse_json_object(reply)
    root = str(data.get("root_cause", "")).strip()
    if root != "unknown" and (root not in candidate_ids or root not in entries):
        raise Rejected(f"root cause {root!r} is not one of the candidates {candidate_ids}")
    evidence, dropped = _refs(data.get("evidence"), log)
    if root != "unknown" and not evidence:
        raise Rejected("none of the cited lines exist in the log")
    rank_raw = data.get("initiating_rank")
    rank: int | None = None
    if isinstance(rank_raw, int) and not isinstance(rank_raw, bool):
        if rank_raw in log.ranks:
            rank = rank_raw
        else:
            dropped.append(f"rank {rank_raw} does not appear in the log")
    entry = entries.get(root)
    known = {c.strip() for c in (entry.fix + entry.verify if entry else [])}
    suggested = [c for c in _commands(data.get("fix")) + _commands(data.get("verify")) if c not in known]
    explanation = str(data.get("explanation", "")).strip()[:EXPLANATION_CHARS]
    return ModelAnswer(root, rank, evidence, explanation, suggested, dropped)
