"""The encyclopedia: load ``kb/entries/*.md`` (YAML front matter + fixed H2 sections) into ``Entry``.

An entry is the single source of truth for its failure: signatures, mechanism,
fix and verification commands are read from its file, never repeated in code.
"""

from __future__ import annotations

import hashlib
import re
from functools import cached_property, lru_cache
from pathlib import Path
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from diagnose.bundled import kb_dir
from diagnose.errors import KBError
from diagnose.schema import Role
from diagnose.yaml_text import YAMLError, load_yaml

SECTIONS: tuple[str, ...] = (
    "What it is",
    "Why it happens",
    "What you'll observe",
    "Symptoms",
    "Affected systems",
    "How to confirm",
    "Fix",
    "Prevention",
    "Verify",
    "Before the next run",
    "Related",
)

_FRONT_MATTER = re.compile(r"\A---\n(.*?)\n---\n(.*)\Z", re.S)
_HEADING = re.compile(r"^## (.+?)\s*$", re.M)
_LIST_ITEM = re.compile(r"^(?:[-*]|\d+\.)\s+(?:\[[ xX]\]\s+)?(.*)$")
_FENCE = re.compile(r"^```[^\n]*\n(.*?)^```", re.S | re.M)


class Signature(BaseModel):
    """A pattern that recognises the entry's failure in one masked log line."""

    model_config = ConfigDict(extra="forbid")

    pattern: str
    role: Role
    weight: float = Field(default=0.8, ge=0.0, le=1.0)
    exclude: str | None = Field(default=None, description="a line that also matches this is not a match")
    blames_printer: bool = Field(
        default=True,
        description="False: the rank that printed the line is a healthy one reporting on others (it names no failing rank)",
    )
    examples: list[str] = Field(min_length=1)

    @cached_property
    def regex(self) -> re.Pattern[str]:
        """The compiled pattern."""
        return re.compile(self.pattern)

    @cached_property
    def exclude_regex(self) -> re.Pattern[str] | None:
        """The compiled exclusion, if any."""
        return re.compile(self.exclude) if self.exclude else None

    def matches(self, line: str) -> bool:
        """True when the line matches the pattern and not the exclusion."""
        return bool(self.regex.search(line)) and not (self.exclude_regex and self.exclude_regex.search(line))


class Entry(BaseModel):
    """One encyclopedia entry."""

    model_config = ConfigDict(extra="forbid")

    id: str
    title: str
    aliases: list[str] = Field(default_factory=list)
    tags: list[str] = Field(default_factory=list)
    related: list[str] = Field(default_factory=list)
    kind: Literal["root-cause", "collateral"] = "root-cause"
    fault: Literal["code", "environment", "machine", "person"] = Field(
        "code", description="whose problem it is: the code, data or config; the installation; the machine; a person's decision"
    )
    drain: bool | None = Field(None, description="the node should leave the pool until fixed (default: a machine fault)")
    helped_by: list[Literal["longer-timeout", "smaller-batch", "nccl-settings"]] = Field(
        default_factory=list, description="generic settings that can help with this cause"
    )
    signatures: list[Signature] = Field(default_factory=list)
    retrieval_lines: list[str] = Field(
        default_factory=list,
        description="lines the retrieval fallback weighs a log line against besides the signatures' examples, never proposed: "
        "the generic messages a collateral entry stands for",
    )
    sections: dict[str, str] = Field(default_factory=dict, description="H2 heading -> Markdown body")

    @property
    def drains_node(self) -> bool:
        """True when the node should leave the pool until it is fixed."""
        return self.fault == "machine" if self.drain is None else self.drain

    def section(self, name: str) -> str:
        """The Markdown body of one section ('' when absent)."""
        return self.sections.get(name, "")

    @property
    def mechanism(self) -> str:
        """The first paragraph of 'Why it happens'."""
        return _first_paragraph(self.section("Why it happens"))

    @property
    def summary(self) -> str:
        """The first paragraph of 'What it is'."""
        return _first_paragraph(self.section("What it is"))

    @property
    def fix(self) -> list[str]:
        """Top-level items of the Fix list."""
        return list_items(self.section("Fix"))

    @property
    def verify(self) -> list[str]:
        """Runnable commands from the Verify section's code blocks."""
        return code_commands(self.section("Verify"))

    @property
    def next_run(self) -> list[str]:
        """Items of 'Before the next run'."""
        return list_items(self.section("Before the next run"))

    def public_fields(self) -> dict[str, object]:
        """Every field for ``kb show --json`` and the API, with fix and verify as lists of strings."""
        data = self.model_dump()
        data.update(mechanism=self.mechanism, summary=self.summary, fix=self.fix, verify=self.verify, next_run=self.next_run)
        return data


def _first_paragraph(markdown: str) -> str:
    for block in re.split(r"\n\s*\n", markdown.strip()):
        if block.strip():
            return " ".join(line.strip() for line in block.splitlines())
    return ""


def list_items(markdown: str) -> list[str]:
    """Top-level list items of a Markdown fragment; indented continuation lines join their item."""
    items: list[str] = []
    in_fence = False
    for raw in markdown.splitlines():
        if raw.lstrip().startswith("```"):
            in_fence = not in_fence
            if items and raw.startswith(" "):
                items[-1] += "\n" + raw.strip()
            continue
        match = _LIST_ITEM.match(raw) if not in_fence else None
        if match:
            items.append(match.group(1).strip())
        elif items and raw.strip() and (raw.startswith(" ") or in_fence):
            items[-1] += ("\n" if in_fence else " ") + raw.strip()
    return items


def code_commands(markdown: str) -> list[str]:
    """Non-empty, non-comment lines of the fenced code blocks; backslash continuations are joined."""
    commands: list[str] = []
    for block in _FENCE.findall(markdown):
        pending = ""
        for line in block.splitlines():
            stripped = line.strip()
            if not pending and (not stripped or stripped.startswith("#")):
                continue
            if stripped.endswith("\\"):
                pending += stripped[:-1].rstrip() + " "
                continue
            commands.append(pending + stripped)
            pending = ""
        if pending:
            commands.append(pending.strip())
    return commands


def parse_entry(text: str, *, source: str = "<entry>") -> Entry:
    """Parse one entry file's text."""
    match = _FRONT_MATTER.match(text.replace("\r\n", "\n"))
    if not match:
        raise KBError(f"{source}: missing YAML front matter between '---' lines")
    try:
        meta = load_yaml(match.group(1)) or {}
    except YAMLError as exc:
        raise KBError(f"{source}: front matter is not valid YAML: {exc}") from exc
    body = match.group(2)
    parts = _HEADING.split(body)
    meta["sections"] = {parts[i].strip(): parts[i + 1].strip() for i in range(1, len(parts) - 1, 2)}
    try:
        return Entry(**meta)
    except (ValidationError, TypeError) as exc:
        raise KBError(f"{source}: {exc}") from exc


@lru_cache(maxsize=4)
def _load(directory: Path) -> tuple[Entry, ...]:
    files = sorted((directory / "entries").glob("*.md"))
    if not files:
        raise KBError(f"no encyclopedia entries in {directory / 'entries'}")
    return tuple(parse_entry(f.read_text(encoding="utf-8"), source=f.name) for f in files)


def load_entries(directory: Path | None = None) -> list[Entry]:
    """All entries, sorted by id."""
    return list(_load(kb_dir(directory)))


def get_entry(entry_id: str, directory: Path | None = None) -> Entry:
    """One entry by id; ``KBError`` when there is none."""
    for entry in load_entries(directory):
        if entry.id == entry_id:
            return entry
    raise KBError(f"no encyclopedia entry '{entry_id}' (see `diagnose kb list`)")


def content_hash(directory: Path | None = None) -> str:
    """A hash of every entry file, to tell when an index is stale."""
    digest = hashlib.sha256()
    for path in sorted((kb_dir(directory) / "entries").glob("*.md")):
        digest.update(path.name.encode())
        digest.update(path.read_bytes())
    return digest.hexdigest()[:16]
