"""The typed form of a Flight Recorder dump: ``RankDump`` (one rank), its ``FREntry`` ops, groups, and the read caps.

Every string in these types is already masked (``diagnose.parse.flight_recorder`` builds them).
"""

from __future__ import annotations

from dataclasses import dataclass, field

__all__ = ["DEFAULT_LIMITS", "FREntry", "Frame", "PGInfo", "PGStatus", "RankDump", "ReadLimits"]


@dataclass(frozen=True)
class ReadLimits:
    """Caps that bound reading: total and per-file bytes, archive members, and the size of one unpickled tree."""

    max_total_bytes: int = 512 * 1024 * 1024
    max_file_bytes: int = 64 * 1024 * 1024
    max_members: int = 20_000
    max_nodes: int = 5_000_000
    max_depth: int = 32


DEFAULT_LIMITS = ReadLimits()


@dataclass(frozen=True, slots=True)
class Frame:
    """One stack frame recorded with an entry (masked)."""

    name: str
    filename: str
    line: int | None


@dataclass(frozen=True, slots=True)
class FREntry:
    """One recorded collective or point-to-point op of one rank, typed for analysis."""

    record_id: int
    pg_id: int | None
    pg_name: str
    pg_desc: str
    collective_seq_id: int
    p2p_seq_id: int
    op_id: int | None
    profiling_name: str
    op: str
    """``profiling_name`` without the backend prefix and peers: ``all_reduce``, ``send``, ``_all_gather_base``."""
    peers: tuple[int, int] | None
    """Group-local (src, dst) of a send/recv, from ``nccl:send 0->1`` / ``nccl:recv 1<-0``."""
    is_p2p: bool
    state: str
    time_created_ns: int | None
    input_sizes: tuple[tuple[int, ...], ...]
    input_dtypes: tuple[str, ...]
    output_sizes: tuple[tuple[int, ...], ...]
    output_dtypes: tuple[str, ...]
    timeout_ms: int | None
    frames: tuple[Frame, ...] = ()

    @property
    def seq_id(self) -> int:
        """The sequence number that orders this op within its group: p2p seq for send/recv, else collective seq."""
        return self.p2p_seq_id if self.is_p2p else self.collective_seq_id

    @property
    def completed(self) -> bool:
        """True when the recorder saw the op finish."""
        return self.state == "completed"


@dataclass(frozen=True, slots=True)
class PGInfo:
    """A process group as one rank's ``pg_config`` describes it: name (global id), description, member ranks."""

    name: str
    desc: str
    ranks: tuple[int, ...]


@dataclass(frozen=True, slots=True)
class PGStatus:
    """``pg_status`` of one local process group: last enqueued/started/completed collective seq (-1 = none)."""

    last_enqueued: int | None
    last_started: int | None
    last_completed: int | None


@dataclass(frozen=True)
class RankDump:
    """The Flight Recorder dump of one rank, masked and typed."""

    rank: int
    file: str
    """masked base name of the dump file, for citations"""
    version: str
    nccl_version: str | None
    pg_config: dict[str, PGInfo]
    """by process group name"""
    pg_status: dict[str, PGStatus]
    """by *local* pg id (``FREntry.pg_id``), which differs across ranks"""
    entries: list[FREntry] = field(default_factory=list)
