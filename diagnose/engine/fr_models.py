"""The results of the Flight Recorder analysis, as pydantic models (JSON-safe, masked text only)."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

__all__ = [
    "CollectiveRef",
    "CompletedRef",
    "FREvidence",
    "FRFacts",
    "FRFinding",
    "FRVerdict",
    "LastCompletedAnswer",
    "ProcessGroupRef",
    "SeqKind",
    "StuckAnswer",
    "VerdictKind",
]

VerdictKind = Literal["hang", "mismatch", "missing-dump", "none"]
SeqKind = Literal["collective", "p2p"]


class _Model(BaseModel):
    model_config = ConfigDict(extra="forbid")


class ProcessGroupRef(_Model):
    """A process group: its name (global id in the dumps), description and member ranks."""

    name: str
    desc: str
    ranks: list[int]


class CollectiveRef(_Model):
    """A collective or p2p op at one sequence number of one group."""

    op: str = Field(description="e.g. all_reduce, _reduce_scatter_base, send")
    seq_id: int
    seq_kind: SeqKind
    profiling_name: str = ""


class FREvidence(_Model):
    """A dump entry (or a pg_status line) cited as evidence."""

    file: str = Field(description="masked dump file name")
    rank: int
    pg_name: str
    pg_desc: str
    record_id: int | None = Field(default=None, description="None when the fact comes from pg_status, not an entry")
    seq_id: int | None = None
    seq_kind: SeqKind = "collective"
    op: str | None = None
    state: str = Field(description="scheduled | started | completed | pg_status | absent")
    role: Literal["waiter", "initiator", "mismatch", "missing-dump"]
    note: str = ""


class CompletedRef(_Model):
    """The last collective a rank completed in one group."""

    rank: int
    file: str | None
    pg_name: str
    pg_desc: str
    seq_id: int | None
    op: str | None = Field(default=None, description="None when the op is no longer in the ring buffer")
    record_id: int | None = None
    source: Literal["entry", "pg_status", "none"]


class FRFinding(_Model):
    """What one process group shows: who waits, for whom, at which collective, and the entries that prove it."""

    kind: Literal["hang", "mismatch", "missing-dump"]
    process_group: ProcessGroupRef
    collective: CollectiveRef | None
    initiating_ranks: list[int]
    waiting_ranks: list[int] = Field(default_factory=list)
    initiating_state: dict[int, str] = Field(default_factory=dict, description="never-entered | stuck-earlier | no-dump | odd-one-out")
    evidence: list[FREvidence] = Field(default_factory=list)
    reason: str


class FRVerdict(_Model):
    """The answer of ``analyze``: the ranks the others wait for, where, why, and the suggested root cause."""

    kind: VerdictKind
    initiating_ranks: list[int] = Field(default_factory=list)
    root_cause_id: str | None = Field(default=None, description="nccl-timeout-hang | collective-mismatch | None")
    process_group: ProcessGroupRef | None = None
    collective: CollectiveRef | None = None
    evidence: list[FREvidence] = Field(default_factory=list)
    reason: str
    last_completed: dict[int, CompletedRef] = Field(default_factory=dict, description="per rank, in the verdict's group")
    findings: list[FRFinding] = Field(default_factory=list, description="every group that supports the verdict, best first")
    missing_dumps: list[int] = Field(default_factory=list)
    world_size: int = 0
    files: list[str] = Field(default_factory=list)


class StuckAnswer(_Model):
    """Chat tool result: the ops rank N had not finished, first per group, oldest first."""

    status: Literal["ok", "no_data"]
    rank: int
    entries: list[FREvidence] = Field(default_factory=list)
    searched: str


class LastCompletedAnswer(_Model):
    """Chat tool result: the last collective every rank completed, per group."""

    status: Literal["ok", "no_data"]
    by_rank: dict[int, list[CompletedRef]] = Field(default_factory=dict)
    searched: str


class FRFacts(_Model):
    """What a chat about a run with dumps needs, computed once (bounded: a few entries per rank, not the dumps)."""

    verdict: FRVerdict
    stuck: dict[int, StuckAnswer] = Field(default_factory=dict, description="stuck_in(rank) for every rank that left a dump")
    last_completed: LastCompletedAnswer
