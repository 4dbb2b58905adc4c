"""ParsedLog: what reading a log leaves behind (bounded, masked), for the engine, the chat and the prompt."""

from __future__ import annotations

from pydantic import BaseModel, Field

from diagnose.schema import Event, Finding, LogLine, Redactions


class FindingGroup(BaseModel):
    """All matches of one (entry, role): how many, on which ranks, first and last order."""

    entry_id: str
    role: str
    count: int = 0
    ranks: list[int] = Field(default_factory=list)
    first_order: int = 0


class ParsedLog(BaseModel):
    """A log after masking and reading: events, findings, per-rank facts and kept lines."""

    sources: list[str] = Field(default_factory=list)
    line_count: int = 0
    byte_count: int = 0
    ranks: list[int] = Field(default_factory=list)
    hosts: dict[int, str] = Field(default_factory=dict, description="rank -> masked host")
    events: list[Event] = Field(default_factory=list)
    findings: list[Finding] = Field(default_factory=list)
    groups: list[FindingGroup] = Field(default_factory=list)
    failure_records: list[dict[str, str]] = Field(default_factory=list, description="ChildFailedError entries")
    launch: dict[str, dict[str, str]] = Field(default_factory=dict, description="per source: node_rank, nproc, global_ranks")
    rank_hints: dict[str, int] = Field(default_factory=dict, description="rank guessed from a file name (rank_3.log)")
    lines: dict[str, list[str]] = Field(default_factory=dict, description="masked lines by source, when kept")
    pieces: dict[str, set[int]] = Field(
        default_factory=dict, description="by kept source: lines that continue a hard-wrapped line (read whole at its first)"
    )
    excerpts: list[LogLine] = Field(default_factory=list, description="lines around events when not all are kept")
    complete: bool = Field(default=True, description="all lines kept (small log)")
    has_text: bool = Field(default=False, description="some line holds more than white space")
    redactions: Redactions = Field(default_factory=Redactions)
    notes: list[str] = Field(default_factory=list)

    def world_size(self) -> int:
        """How many ranks the run had: the launcher's word (WORLD_SIZE, nnodes x nproc) or the ranks seen."""
        return max(len(self.ranks), self.stated_world_size() or 0)

    def stated_world_size(self) -> int | None:
        """The launcher's word on how many ranks the run had (WORLD_SIZE, nnodes x nproc), None when it says nothing."""
        sizes = []
        for facts in self.launch.values():
            if facts.get("world_size"):
                sizes.append(int(facts["world_size"]))
            if facts.get("nproc"):
                sizes.append(int(facts["nproc"]) * int(facts.get("nnodes", "1")))
        return max(sizes, default=None)

    def line_text(self, source: str, line: int) -> str | None:
        """The masked text of one line, if kept."""
        kept = self.lines.get(source)
        if kept is not None:
            return kept[line - 1] if 0 < line <= len(kept) else None
        for excerpt in self.excerpts:
            if excerpt.source == source and excerpt.line == line:
                return excerpt.text
        return None

    def lines_above(self, line: LogLine, count: int) -> list[str]:
        """The kept texts of the ``count`` lines above ``line`` in its file, nearest first (lines not kept are left out;
        a hard-wrapped line counts once, read whole)."""
        pieces = self.pieces.get(line.source, set())
        numbers = (n for n in range(line.line - 1, 0, -1) if n not in pieces)
        above = (self.line_text(line.source, n) for _, n in zip(range(count), numbers, strict=False))
        return [text for text in above if text is not None]

    def line_after(self, line: LogLine) -> str | None:
        """The kept text of the line after ``line`` in its file, past the pieces of ``line`` if the wrap cut it."""
        pieces = self.pieces.get(line.source, set())
        after = line.line + 1
        while after in pieces:
            after += 1
        return self.line_text(line.source, after)

    def has_line(self, source: str, line: int) -> bool:
        """True when the log has that line (kept or not)."""
        return self.line_text(source, line) is not None
