"""Check a model's diagnosis against what exists: the candidate ids, the log's lines, its ranks, the entry.

What fails a check is dropped, and each drop is reported; when the core of the answer fails (a root
cause that is not a candidate, ``unknown``, no cited line that exists) the whole answer is rejected.
Cited lines are checked for support too: a line supports a candidate when one of the candidate's
signatures matches it or one of its findings is on it. A rank is kept only when it is the rank of
a cited line that supports the chosen root cause.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field

from diagnose.encyclopedia.entries import Entry
from diagnose.llm.prompting import PromptLine
from diagnose.llm.repair import close_truncated
from diagnose.llm.sanitize import clean_text
from diagnose.parse.parsed_log import ParsedLog
from diagnose.parse.prefixes import split_prefix

EXPLANATION_CHARS = 2000
MAX_CITED = 20
_REF = re.compile(r"^(?P<file>.+):(?P<line>\d+)$")


@dataclass
class ModelAnswer:
    """The model's answer after grounding: what survived and what was dropped."""

    root_cause: str
    initiating_rank: int | None
    evidence: list[tuple[str, int]]
    explanation: str
    supporting: list[tuple[str, int]] = field(default_factory=list)
    commands: list[str] = field(default_factory=list)
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
        data = json.loads(text[start : end + 1], strict=False)  # a grammar may let a raw newline into a string
    except json.JSONDecodeError as exc:
        raise Rejected(f"the reply is not valid JSON ({exc.msg})") from exc
    if not isinstance(data, dict):
        raise Rejected("the reply is not a JSON object")
    return data


def _ref(item: object, log: ParsedLog, quoted: list[PromptLine]) -> tuple[str, int] | None:
    """A cited line as (file, line): an index into the quoted lines, or a ``file:line`` reference."""
    if isinstance(item, bool):
        return None
    text = str(item).strip().strip("[]")
    if isinstance(item, int) or (text.isdigit() and quoted):
        index = int(text)
        if not 0 < index <= len(quoted):
            return None
        source, _, number = quoted[index - 1].ref.rpartition(":")
        return source, int(number)
    match = _REF.match(text)
    if match:
        return match.group("file"), int(match.group("line"))
    if text.isdigit() and len(log.sources) == 1:
        return log.sources[0], int(text)
    return None


def _refs(raw: object, log: ParsedLog, quoted: list[PromptLine]) -> tuple[list[tuple[str, int]], list[str]]:
    kept: list[tuple[str, int]] = []
    dropped: list[str] = []
    for item in (raw if isinstance(raw, list) else [])[:MAX_CITED]:
        ref = _ref(item, log, quoted)
        if ref is not None and log.has_line(*ref):
            if ref not in kept:
                kept.append(ref)
        else:
            dropped.append(f"cited line {clean_text(str(item))[:60]!r} is not in the log")
    return kept, dropped


def supports(log: ParsedLog, entry: Entry, ref: tuple[str, int]) -> bool:
    """True when the line shows the entry's failure: one of its signatures matches it, or one of its findings is on it."""
    if any(f.entry_id == entry.id and (f.evidence.source, f.evidence.line) == ref for f in log.findings):
        return True
    text = log.line_text(*ref) or ""
    return any(signature.matches(text) for signature in entry.signatures)


def line_rank(log: ParsedLog, ref: tuple[str, int]) -> int | None:
    """The rank the line itself proves: a finding's rank, or its prefix. A file name (``worker-1.log``) may name
    a node or a pod, not a global rank, so a rank known only from it proves nothing here."""
    text = log.line_text(*ref) or ""
    prefixed = split_prefix(text)[0]
    hinted = log.rank_hints.get(ref[0])
    for finding in log.findings:
        if (finding.evidence.source, finding.evidence.line) == ref and finding.rank is not None:
            if finding.rank == hinted and prefixed is None:
                return None
            return finding.rank
    return prefixed


def _root(raw: object, candidate_ids: list[str], entries: dict[str, Entry]) -> str:
    root = clean_text(str(raw or "")).strip()
    by_lower = {c.lower(): c for c in candidate_ids if c in entries}
    if root.lower() == "unknown":
        raise Rejected("the model answered 'unknown'; it may choose among the candidates, never drop the diagnosis")
    if root.lower() not in by_lower:
        raise Rejected(f"root cause {root[:60]!r} is not one of the candidates {candidate_ids}")
    return by_lower[root.lower()]


def _rank(raw: object, log: ParsedLog, supporting: list[tuple[str, int]], root: str) -> tuple[int | None, list[str]]:
    if raw is None or isinstance(raw, bool) or not isinstance(raw, int | str) or not str(raw).strip().lstrip("-").isdigit():
        return None, []
    rank = int(str(raw).strip())
    if rank not in log.ranks:
        return None, [f"rank {rank} does not appear in the log"]
    if rank not in {line_rank(log, ref) for ref in supporting}:
        return None, [f"rank {rank} is not the rank of a cited line that shows {root}"]
    return rank, []


def _strings(raw: object) -> list[str]:
    return [str(x) for x in raw if str(x).strip()][:10] if isinstance(raw, list) else []


def ground(
    reply: str, log: ParsedLog, candidate_ids: list[str], entries: dict[str, Entry], quoted: list[PromptLine] | None = None
) -> ModelAnswer:
    """Validate a diagnosis reply; raise Rejected when its root cause fails or no cited line exists and shows it."""
    try:
        data, cut = parse_json_object(reply), False
    except Rejected:
        repaired = close_truncated(reply)
        if repaired is None:
            raise
        data, cut = repaired, True
    root = _root(data.get("root_cause"), candidate_ids, entries)
    evidence, dropped = _refs(data.get("evidence"), log, quoted or [])
    if not evidence:
        raise Rejected("none of the cited lines exist in the log")
    entry = entries[root]
    supporting = [ref for ref in evidence if supports(log, entry, ref)]
    if not supporting:
        raise Rejected(f"none of the cited lines shows {root}")
    unrelated = [f"{f}:{n}" for f, n in evidence if (f, n) not in supporting]
    if unrelated:
        shown = ", ".join(unrelated[:3]) + (f" and {len(unrelated) - 3} more" if len(unrelated) > 3 else "")
        dropped.append(f"cited line(s) {shown} do not show {root}")
    rank, why = _rank(data.get("initiating_rank"), log, supporting, root)
    explanation = clean_text(str(data.get("explanation") or "")).strip()[:EXPLANATION_CHARS]
    commands = _strings(data.get("fix")) + _strings(data.get("verify"))
    if cut:
        dropped.append("the reply was cut at its token allowance; its complete fields were checked")
        commands = commands[:-1]  # the string being written when it was cut
    return ModelAnswer(root, rank, evidence, explanation, supporting, commands, dropped + why)
