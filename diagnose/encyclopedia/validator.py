"""The encyclopedia validator: every rule an entry file must follow, as a list of problems."""

from __future__ import annotations

import re
from pathlib import Path

from diagnose.encyclopedia.entries import SECTIONS, Entry, parse_entry
from diagnose.errors import KBError

_ID = re.compile(r"^[a-z0-9]+(?:-[a-z0-9]+)*$")


def _entry_problems(entry: Entry, file_stem: str) -> list[str]:
    problems: list[str] = []
    where = f"{file_stem}.md"
    if entry.id != file_stem:
        problems.append(f"{where}: id '{entry.id}' differs from the file name")
    if not _ID.match(entry.id):
        problems.append(f"{where}: id must be lowercase words joined by dashes")
    missing = [name for name in SECTIONS if name not in entry.sections]
    if missing:
        problems.append(f"{where}: missing sections {missing}")
    order = [name for name in entry.sections if name in SECTIONS]
    if order != [name for name in SECTIONS if name in entry.sections]:
        problems.append(f"{where}: sections out of order")
    if not entry.fix:
        problems.append(f"{where}: Fix has no list items")
    if not entry.verify:
        problems.append(f"{where}: Verify has no commands in a code block")
    if entry.kind == "root-cause" and not entry.signatures:
        problems.append(f"{where}: a root-cause entry needs signatures")
    for number, signature in enumerate(entry.signatures, 1):
        try:
            re.compile(signature.pattern)
            re.compile(signature.exclude or "")
        except re.error as exc:
            problems.append(f"{where}: signature {number} does not compile: {exc}")
            continue
        for example in signature.examples:
            if not signature.matches(example):
                problems.append(f"{where}: signature {number} ({signature.pattern!r}) misses its example {example!r}")
    return problems


def validate(directory: Path, taxonomy_ids: list[str] | None = None) -> list[str]:
    """All problems of the encyclopedia in ``directory`` (empty when valid).

    ``taxonomy_ids``, when given, must each have an entry.
    """
    problems: list[str] = []
    entries: dict[str, Entry] = {}
    for path in sorted((directory / "entries").glob("*.md")):
        try:
            entry = parse_entry(path.read_text(encoding="utf-8"), source=path.name)
        except KBError as exc:
            problems.append(str(exc))
            continue
        if entry.id in entries:
            problems.append(f"{path.name}: duplicate id '{entry.id}'")
        entries[entry.id] = entry
        problems.extend(_entry_problems(entry, path.stem))
    for entry in entries.values():
        for related in entry.related:
            if related not in entries:
                problems.append(f"{entry.id}.md: related id '{related}' has no entry")
    problems.extend(_claimed_retrieval_lines(list(entries.values())))
    for taxonomy_id in taxonomy_ids or []:
        if taxonomy_id not in entries:
            problems.append(f"taxonomy id '{taxonomy_id}' has no entry")
    return problems


def _claimed_retrieval_lines(entries: list[Entry]) -> list[str]:
    """A retrieval line stands for what no root cause's signature reads: one that a root cause's initiating signature
    matches would be that cause, not a generic message."""
    signatures = [(e.id, s) for e in entries if e.kind == "root-cause" for s in e.signatures if s.role == "initiating"]
    return [
        f"{entry.id}.md: retrieval line {line!r} is matched by a signature of {claimer}"
        for entry in entries
        for line in entry.retrieval_lines
        for claimer, signature in signatures
        if signature.matches(line)
    ]
