"""Scoring follow-up answers: pure checks of one answer against the facts written for its question. No LLM judge.

A question lists what the answer must contain (regex patterns: the rank, the host placeholder, the
cited line, the command), what it must not contain (a wrong rank, a raw secret, an invented line),
the sources it must cite, and whether it is out of scope (then an honest "the log does not say ...
what would answer it" is the right answer).
"""

from __future__ import annotations

import re
from typing import Any, Literal, get_args

from pydantic import BaseModel, ConfigDict, Field

from diagnose.chat.session import Answer
from diagnose.encyclopedia.entries import get_entry
from diagnose.errors import KBError
from diagnose.parse.parsed_log import ParsedLog

QuestionType = Literal[
    "rank",
    "node",
    "hardware-or-code",
    "setting",
    "after-hours",
    "confirm",
    "resume",
    "alternatives",
    "lines-around",
    "fix",
    "evidence",
    "out-of-scope",
]
QUESTION_TYPES: tuple[str, ...] = get_args(QuestionType)
HONEST = (re.compile(r"(?i)\bthe log does not (?:say|show|name|have)\b"), re.compile(r"(?i)\bwhat would answer it\b"))


class ChatQuestion(BaseModel):
    """One follow-up question and the facts its answer is checked against (written from the log and its label)."""

    model_config = ConfigDict(extra="forbid")

    q: str
    type: QuestionType
    must: list[str] = Field(default_factory=list, description="regex patterns the answer must contain")
    must_not: list[str] = Field(default_factory=list, description="regex patterns the answer must not contain")
    cite: list[str] = Field(default_factory=list, description="'log:<line>', 'log:<file>:<line>', 'kb:<id>' or 'kb:<id>#<section>'")
    honest_unknown: bool = Field(default=False, description="out of scope: the answer must say the log does not say, and what would")


class QuestionResult(BaseModel):
    """How one answer scored."""

    case: str
    q: str
    type: str
    must_found: list[str] = Field(default_factory=list)
    must_missed: list[str] = Field(default_factory=list)
    forbidden_found: list[str] = Field(default_factory=list)
    forbidden_checked: int = 0
    cite_found: list[str] = Field(default_factory=list)
    cite_missed: list[str] = Field(default_factory=list)
    citations: int = Field(default=0, description="citations checked: the answer's, and line references in its text")
    invalid_citations: list[str] = Field(default_factory=list)
    honest_unknown: bool | None = Field(default=None, description="for out-of-scope questions: answered honestly")
    diagnosis_right: bool = Field(default=True, description="the case's diagnosis matches its label (class and rank)")
    answer: str = ""


def _cited(required: str, answer: Answer) -> bool:
    kind, _, ref = required.partition(":")
    if kind == "kb":
        entry_id, _, section = ref.partition("#")
        return any(c.kind == "kb" and c.entry_id == entry_id and (not section or c.section == section) for c in answer.citations)
    file, _, line = ref.rpartition(":")
    return any(c.kind == "log" and str(c.line) == line and (not file or (c.file or "").endswith(file)) for c in answer.citations)


def invalid_citations(answer: Answer, log: ParsedLog) -> tuple[list[str], int]:
    """Citations that do not exist: log lines not in the masked log (or quoted differently), kb entries or sections that do not exist.

    Line references written in the answer's text (``file:line`` of a source of this log) count as citations too.
    Returns (the invalid ones, how many were checked).
    """
    bad: list[str] = []
    cited = [c for c in answer.citations if c.kind in ("log", "kb")]  # dump entries are checked by the dump's own tests
    checked = {f"{c.file}:{c.line}" if c.kind == "log" else f"kb:{c.entry_id}#{c.section}" for c in cited}
    for c in cited:
        if c.kind == "log":
            text = log.line_text(c.file or "", c.line or 0)
            if text is None or (c.text and c.text != text):
                bad.append(f"{c.file}:{c.line}")
        elif c.kind == "kb":
            try:
                entry = get_entry(c.entry_id or "")
            except KBError:
                bad.append(f"kb:{c.entry_id}")
                continue
            if c.section is not None and c.section not in entry.sections:
                bad.append(f"kb:{c.entry_id}#{c.section}")
    for source in log.sources:
        for number in sorted(set(re.findall(rf"(?<![\w/<>.-]){re.escape(source)}:(\d+)", answer.answer))):
            ref = f"{source}:{number}"
            if ref not in checked:
                checked.add(ref)
                if log.line_text(source, int(number)) is None:
                    bad.append(ref)
    return bad, max(len(checked), len(cited))


def score_answer(case: str, question: ChatQuestion, answer: Answer, log: ParsedLog) -> QuestionResult:
    """Check one answer against its question's facts."""
    text = answer.answer
    found = [p for p in question.must if re.search(p, text)]
    forbidden = [p for p in question.must_not if re.search(p, text)]
    cites = [c for c in question.cite if _cited(c, answer)]
    honest = all(p.search(text) for p in HONEST) if question.honest_unknown else None
    invalid, checked = invalid_citations(answer, log)
    return QuestionResult(
        case=case,
        q=question.q,
        type=question.type,
        must_found=found,
        must_missed=[p for p in question.must if p not in found],
        forbidden_found=forbidden,
        forbidden_checked=len(question.must_not),
        cite_found=cites,
        cite_missed=[c for c in question.cite if c not in cites],
        citations=checked,
        invalid_citations=invalid,
        honest_unknown=honest,
        answer=text,
    )


def _ratio(part: int, whole: int) -> float | None:
    return round(part / whole, 3) if whole else None


def summarize_chat(results: list[QuestionResult], backend: str, leaked: list[str], cases: int) -> dict[str, object]:
    """The chat eval's figures (``diagnose eval --chat --json``), overall and by question type, with per-question results."""

    def figures(rows: list[QuestionResult]) -> dict[str, object]:
        must = sum(len(r.must_found) + len(r.must_missed) for r in rows)
        cite = sum(len(r.cite_found) + len(r.cite_missed) for r in rows)
        hits = sum(len(r.must_found) for r in rows)
        cited = sum(len(r.cite_found) for r in rows)
        unknown = [r for r in rows if r.honest_unknown is not None]
        citations = sum(r.citations for r in rows)
        return {
            "questions": len(rows),
            "fact_recall": _ratio(hits + cited, must + cite),
            "must_recall": _ratio(hits, must),
            "cite_recall": _ratio(cited, cite),
            "forbidden_found": sum(len(r.forbidden_found) for r in rows),
            "forbidden_right_diagnosis": sum(len(r.forbidden_found) for r in rows if r.diagnosis_right),
            "forbidden_rate": _ratio(sum(len(r.forbidden_found) for r in rows), sum(r.forbidden_checked for r in rows)),
            "citations_valid": _ratio(citations - sum(len(r.invalid_citations) for r in rows), citations),
            "honest_unknown": _ratio(sum(bool(r.honest_unknown) for r in unknown), len(unknown)),
        }

    by_type = {t: figures(rows) for t in QUESTION_TYPES if (rows := [r for r in results if r.type == t])}
    return {
        "backend": backend,
        "cases": cases,
        **figures(results),
        "leaks": len(leaked),
        "leaked": leaked,
        "by_type": by_type,
        "results": [r.model_dump() for r in results],
    }


def chat_markdown(summary: dict[str, object]) -> str:
    """A Markdown table of the chat eval (the README shows it)."""
    keys = ("questions", "fact_recall", "forbidden_found", "forbidden_right_diagnosis", "citations_valid", "honest_unknown")
    lines = [
        f"# diagnose eval --chat ({summary['backend']})",
        "",
        f"{summary['questions']} questions over {summary['cases']} cases; secrets leaked: {summary['leaks']}; "
        "forbidden_right_diagnosis counts forbidden facts in cases whose diagnosis matches the label",
        "",
        "| type | " + " | ".join(keys) + " |",
        "|---" * (len(keys) + 1) + "|",
    ]
    by_type = summary["by_type"]
    rows: dict[str, Any] = {"all": summary, **(by_type if isinstance(by_type, dict) else {})}
    for name, row in rows.items():
        lines.append(f"| {name} | " + " | ".join(str(row[k]) for k in keys) + " |")
    return "\n".join(lines) + "\n"
