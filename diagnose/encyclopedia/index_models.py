"""What the vector index returns: passages, nearest example lines, and what a build did."""

from __future__ import annotations

from pydantic import BaseModel, Field

HNSW = {"space": "cosine", "ef_construction": 200, "ef_search": 200, "max_neighbors": 32}
"""Both collections' HNSW graph. With chromadb's defaults (100 / 100 / 16) on the sparse hashed features, an example
line queried verbatim fell out of its own 25 nearest in 7 fresh builds of 10 (1-2 lines each; these settings: 0 of
10, search p50 4.3 -> 4.6 ms; ``bench/bench_index.py``). The graph differs from build to build, so such a miss made
answers vary between machines."""


class Passage(BaseModel):
    """One section of one entry, as retrieved."""

    entry_id: str
    section: str
    text: str = Field(description="the section's Markdown")
    score: float = Field(description="cosine similarity to the query, -1..1")


class ExampleHit(BaseModel):
    """The encyclopedia example line nearest to one query line."""

    entry_id: str
    example: str
    score: float = Field(description="cosine similarity to the query line, -1..1")
    signature: str = Field(default="", description="the pattern of the signature the example illustrates")


class IndexStats(BaseModel):
    """What a build did."""

    entries: int
    passages: int
    seconds: float
    location: str
    embedder: str
    content_hash: str
