"""What the vector index returns: passages, nearest example lines, and what a build did."""

from __future__ import annotations

from pydantic import BaseModel, Field


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
