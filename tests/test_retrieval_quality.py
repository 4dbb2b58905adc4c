"""Retrieval quality on the encyclopedia itself: each entry's example lines must find that entry.

Prints two figures (run with ``-s`` to see them):
- vector search alone: share of entries found in the top 3 by their example lines (target >= 90%);
- signatures combined with vectors: share found at rank 1 (target 100%).
The example lines live in the front matter, which is not indexed: only the Markdown sections are.
"""

from __future__ import annotations

import pytest

from diagnose.encyclopedia.entries import Entry, load_entries
from diagnose.encyclopedia.index import KBIndex, open_index
from diagnose.encyclopedia.retrieval import query_text, retrieve, signature_hits
from diagnose.settings import Settings, load_settings

pytest.importorskip("chromadb")


@pytest.fixture(scope="module")
def entries() -> list[Entry]:
    """Every entry that has example lines."""
    found = [e for e in load_entries(load_settings().kb_dir) if e.signatures]
    if not found:
        pytest.fail("no entry with example lines: nothing to measure")
    return found


@pytest.fixture(scope="module")
def index(tmp_path_factory: pytest.TempPathFactory) -> KBIndex:
    """A fresh embedded index of the real encyclopedia."""
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("DIAGNOSE_HOME", str(tmp_path_factory.mktemp("home")))
        patch.delenv("DIAGNOSE_CHROMA_URL", raising=False)
        built = open_index(Settings(kb_dir=load_settings().kb_dir))
        built.build()
    return built


def _examples(entry: Entry) -> list[str]:
    return [line for signature in entry.signatures for line in signature.examples]


def test_vector_search_alone_finds_the_entry_in_the_top_3(entries: list[Entry], index: KBIndex) -> None:
    misses: list[str] = []
    line_hits = line_total = 0
    for entry in entries:
        found = [p.entry_id for p in index.search(query_text(_examples(entry)), k=3)]
        if entry.id not in found:
            misses.append(f"{entry.id} -> {found}")
        for line in _examples(entry):
            line_total += 1
            line_hits += entry.id in [p.entry_id for p in index.search(query_text([line]), k=3)]
    share = 1 - len(misses) / len(entries)
    print(f"\nvector search alone, top 3: {share:.1%} of {len(entries)} entries")
    print(f"  (each example line on its own: {line_hits / line_total:.1%} of {line_total} lines)")
    for miss in misses:
        print(f"  miss: {miss}")
    assert share >= 0.9, misses


def test_signatures_combined_put_the_entry_first(entries: list[Entry], index: KBIndex) -> None:
    misses: list[str] = []
    for entry in entries:
        lines = _examples(entry)
        passages = retrieve(lines, signature_hits(lines, entries), index, k=3)
        if not passages or passages[0].entry_id != entry.id:
            misses.append(f"{entry.id} -> {[p.entry_id for p in passages]}")
    share = 1 - len(misses) / len(entries)
    print(f"\nsignatures + vectors, rank 1: {share:.1%} of {len(entries)} entries")
    for miss in misses:
        print(f"  miss: {miss}")
    assert not misses
