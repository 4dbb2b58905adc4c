"""Render prompt templates (``diagnose/llm/prompts/*.jinja2``) into chat messages, within a token budget.

Rendering is pure: StrictUndefined, no clock, the caller's context is not changed.
Log text enters a prompt only as masked lines, quoted inside ``<log>`` and numbered
as ``file:line`` references the model may cite.
"""

from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

import jinja2

from diagnose.parse.parsed_log import ParsedLog
from diagnose.parse.prefixes import split_prefix
from diagnose.schema import LogLine

PROMPTS = Path(__file__).with_name("prompts")
CHARS_PER_TOKEN = 4
WINDOW = 3
QUOTED_LINE_CHARS = 1000
_ROLE = re.compile(r"^\[(system|user|assistant)\]\s*$", re.M)


@dataclass(frozen=True)
class PromptLine:
    """One quoted log line: its citable reference, rank and masked text."""

    ref: str
    rank: int | None
    text: str


@lru_cache(maxsize=1)
def _environment() -> jinja2.Environment:
    return jinja2.Environment(
        loader=jinja2.FileSystemLoader(PROMPTS),
        undefined=jinja2.StrictUndefined,
        autoescape=False,
        keep_trailing_newline=True,
    )


def prompt_version() -> str:
    """A hash of every template: part of the response cache key and logged with each run."""
    digest = hashlib.sha256()
    for path in sorted(PROMPTS.glob("*.jinja2")):
        digest.update(path.read_bytes())
    return digest.hexdigest()[:12]


def render(name: str, **context: object) -> str:
    """Render ``prompts/<name>.jinja2``; a missing variable is an error, never an empty string."""
    return _environment().get_template(f"{name}.jinja2").render(**context)


def to_messages(rendered: str) -> list[dict[str, str]]:
    """Split a rendered template at its ``[system]``/``[user]``/``[assistant]`` markers, into a conversation
    that strict chat templates accept (Gemma's, Mistral's, Llama 2's): an optional system message, then
    user and assistant strictly alternating, starting and ending with the user.
    """
    parts = _ROLE.split(rendered)
    found = [(parts[i], parts[i + 1].strip()) for i in range(1, len(parts) - 1, 2) if parts[i + 1].strip()]
    return alternate([{"role": role, "content": content} for role, content in found])


def alternate(messages: list[dict[str, str]]) -> list[dict[str, str]]:
    """Merge neighbours of one role and empty turns away: system first, then user/assistant alternating, user last."""
    system = "\n\n".join(m["content"] for m in messages if m["role"] == "system" and m["content"].strip())
    out: list[dict[str, str]] = [{"role": "system", "content": system}] if system else []
    for message in messages:
        role, content = message["role"], message["content"].strip()
        if role == "system" or not content:
            continue
        if out and out[-1]["role"] == role:
            out[-1] = {"role": role, "content": out[-1]["content"] + "\n\n" + content}
        elif role == "assistant" and (not out or out[-1]["role"] == "system"):
            continue  # a conversation never opens with the assistant
        else:
            out.append({"role": role, "content": content})
    while out and out[-1]["role"] == "assistant":
        out.pop()
    return out


def fold_system(messages: list[dict[str, str]]) -> list[dict[str, str]]:
    """The system message moved into the first user turn, for chat templates that have no system role (Mistral v0.1)."""
    system = "\n\n".join(m["content"] for m in messages if m["role"] == "system")
    rest = [dict(m) for m in messages if m["role"] != "system"]
    if system and rest and rest[0]["role"] == "user":
        rest[0]["content"] = f"{system}\n\n{rest[0]['content']}"
    elif system:
        rest.insert(0, {"role": "user", "content": system})
    return alternate(rest)


def quote(text: str) -> str:
    """Log text made safe to sit inside the <log> block."""
    return text.replace("<log>", "<log >").replace("</log>", "</log >").replace("\n", " ")[:QUOTED_LINE_CHARS]


def ref(line: LogLine) -> str:
    """The citable reference of a line."""
    return f"{line.source}:{line.line}"


def window_lines(log: ParsedLog, anchors: list[LogLine], budget_tokens: int) -> list[PromptLine]:
    """Lines around each anchor (in priority order), deduplicated, until the token budget is spent."""
    chosen: dict[tuple[str, int], PromptLine] = {}
    budget = budget_tokens * CHARS_PER_TOKEN
    for anchor in anchors:
        for number in range(anchor.line - WINDOW, anchor.line + WINDOW + 1):
            key = (anchor.source, number)
            if key in chosen:
                continue
            text = anchor.text if number == anchor.line else log.line_text(anchor.source, number)
            if text is None:
                continue
            rank = anchor.rank if number == anchor.line else split_prefix(text)[0]
            line = PromptLine(f"{anchor.source}:{number}", rank, quote(text))
            cost = len(line.ref) + len(line.text) + 12
            if cost > budget:
                return _ordered(chosen, log)
            budget -= cost
            chosen[key] = line
    return _ordered(chosen, log)


def _ordered(chosen: dict[tuple[str, int], PromptLine], log: ParsedLog) -> list[PromptLine]:
    order = {name: i for i, name in enumerate(log.sources)}
    return [chosen[key] for key in sorted(chosen, key=lambda k: (order.get(k[0], 0), k[1]))]
