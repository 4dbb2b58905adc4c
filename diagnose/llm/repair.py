"""Read what a cut reply holds: a JSON answer stopped at ``max_tokens`` is closed at its last complete field.

A schema-constrained answer comes field by field in the schema's order (root cause, rank, cited
lines first), so an answer cut inside its explanation still holds everything grounding checks.
Nothing is invented: open strings and brackets are closed, or the last incomplete field is dropped.
"""

from __future__ import annotations

import json

MAX_CUTS = 8


def _scan(prefix: str) -> tuple[list[str], bool, bool, list[int]]:
    """(closers still open, inside a string, after a backslash, positions of commas outside strings)."""
    closers: list[str] = []
    commas: list[int] = []
    in_string = escaped = False
    for i, ch in enumerate(prefix):
        if in_string:
            if escaped:
                escaped = False
            elif ch == "\\":
                escaped = True
            elif ch == '"':
                in_string = False
        elif ch == '"':
            in_string = True
        elif ch in "{[":
            closers.append("}" if ch == "{" else "]")
        elif ch in "}]" and closers:
            closers.pop()
        elif ch == ",":
            commas.append(i)
    return closers, in_string, escaped, commas


def _closed(prefix: str) -> str:
    closers, in_string, escaped, _ = _scan(prefix)
    if escaped:
        prefix = prefix[:-1]
    return prefix + ('"' if in_string else "") + "".join(reversed(closers))


def close_truncated(text: str) -> dict[str, object] | None:
    """The JSON object a cut reply began, closed at the longest prefix that parses; None when there is none."""
    start = text.find("{")
    if start < 0:
        return None
    body = text[start:].rstrip()
    cuts = [len(body), *reversed(_scan(body)[3][-MAX_CUTS:])]
    for cut in cuts:
        try:
            data = json.loads(_closed(body[:cut].rstrip().rstrip(":")), strict=False)
        except ValueError:
            continue
        if isinstance(data, dict):
            return data
    return None
