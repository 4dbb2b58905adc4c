"""The encyclopedia: the validator passes, and every taxonomy id has an entry."""

from __future__ import annotations

import re
from pathlib import Path

from diagnose.bundled import kb_dir
from diagnose.encyclopedia.entries import load_entries, parse_entry
from diagnose.encyclopedia.validator import validate


def taxonomy_ids(shared: Path) -> list[str]:
    """The ids of ../shared/taxonomy.yaml (read by pattern: the file is not strict YAML)."""
    text = (shared / "taxonomy.yaml").read_text(encoding="utf-8")
    return re.findall(r"^\s*- id: ([a-z0-9-]+)\s*$", text, re.M)


def test_validator_finds_no_problem() -> None:
    problems = validate(kb_dir())
    assert problems == [], "\n".join(problems)


def test_every_taxonomy_id_has_an_entry(shared: Path) -> None:
    ids = taxonomy_ids(shared)
    assert len(ids) >= 30
    problems = validate(kb_dir(), ids)
    assert problems == [], "\n".join(problems)


def test_at_least_45_entries_each_with_fix_and_verify() -> None:
    entries = load_entries()
    print(f"\n{len(entries)} entries, {sum(len(e.signatures) for e in entries)} signatures")
    assert len(entries) >= 45
    assert all(e.fix and e.verify for e in entries)


def test_validator_catches_a_broken_entry(tmp_path: Path) -> None:
    (tmp_path / "entries").mkdir()
    (tmp_path / "entries" / "wrong-name.md").write_text(
        "---\nid: broken\ntitle: x\nrelated: [nowhere]\nretrieval_lines: ['CUDA out of memory on the card']\nsignatures:\n"
        "  - pattern: 'CUDA out of memory'\n    role: initiating\n    examples: ['nothing like it']\n"
        "  - pattern: '(unclosed'\n    role: cascade\n    examples: ['x']\n---\n## What it is\nx\n"
    )
    problems = "\n".join(validate(tmp_path, ["cuda-oom"]))
    for expected in (
        "differs from the file name",
        "missing sections",
        "Fix has no list items",
        "Verify has no commands",
        "misses its example",
        "does not compile",
        "'nowhere' has no entry",
        "taxonomy id 'cuda-oom' has no entry",
        "retrieval line 'CUDA out of memory on the card' is matched by a signature of broken",
    ):
        assert expected in problems


def test_fix_and_verify_are_parsed_from_the_sections() -> None:
    entry = parse_entry(
        "---\nid: x\ntitle: X\n---\n## Fix\n\n1. First step\n   continues here.\n2. Second `step`\n\n"
        "## Verify\n\n```bash\n# a comment\nnvidia-smi -q -d ECC\npython -c \\\n  'import torch'\n```\n"
    )
    assert entry.fix == ["First step continues here.", "Second `step`"]
    assert entry.verify == ["nvidia-smi -q -d ECC", "python -c 'import torch'"]


def test_every_example_still_matches_once_masked() -> None:
    """The engine matches masked lines: a signature that spells out what redaction masks (an address, a host, a
    path's user) would never fire on a real log, though it matches its example as written. Each example is masked
    on its own, so what one entry's example teaches the redactor cannot decide another entry's."""
    from redaction import Redactor

    misses = [
        f"{entry.id}: {signature.pattern!r} misses {masked!r}"
        for entry in load_entries()
        for signature in entry.signatures
        for example in signature.examples
        if signature.matches(example) and not signature.matches(masked := Redactor().redact_line(example))
    ]
    assert misses == [], "\n".join(misses)
