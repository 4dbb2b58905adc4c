"""The data model and the public JSON contract.

Every stage speaks these types. ``Diagnosis`` is the contract of
``diagnose log --json``, of the web API and of the evals: its JSON form is
produced by ``Diagnosis.model_dump_json()`` and nothing builds dicts by hand.

All text held in these models is masked: the redactor runs before a
``LogLine`` is created.
"""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

Role = Literal["initiating", "cascade", "teardown", "noise"]
"""What a log event means causally.

initiating: a failure that can start a crash or a hang on its own.
cascade: a consequence of another rank's failure (watchdog timeouts, broken pipes).
teardown: the launcher stopping healthy ranks (SIGTERMs, ChildFailedError).
noise: warnings, advice and retries that change nothing.
"""

ROLE_ORDER: dict[str, int] = {"initiating": 0, "cascade": 1, "teardown": 2, "noise": 3}


class _Model(BaseModel):
    model_config = ConfigDict(extra="forbid")


class LogLine(_Model):
    """One masked line of a log, with what its prefix says about who printed it."""

    source: str = Field(description="file the line came from ('<stdin>' for standard input)")
    line: int = Field(description="1-based line number within source")
    rank: int | None = None
    local_rank: int | None = Field(default=None, description="the local rank a logger's column names (OLMo's host:3)")
    host: str | None = Field(default=None, description="masked host name, e.g. <HOST_2>")
    timestamp: float | None = Field(default=None, description="seconds since the epoch, if derivable")
    text: str = Field(description="the masked line, launcher prefix included")


class Event(_Model):
    """Something that happened in the run: a traceback, an NCCL error, a signal, a kernel line."""

    kind: str = Field(description="traceback, watchdog_timeout, nccl, signal, exit, kernel, scheduler, flight_recorder, line")
    role: Role
    lines: list[LogLine] = Field(description="the lines the event spans; the first is its anchor")
    rank: int | None = None
    host: str | None = None
    timestamp: float | None = None
    exception_type: str | None = None
    message: str | None = None
    fields: dict[str, str] = Field(default_factory=dict, description="parsed details: SeqNum, OpType, exitcode, signal, ...")

    @property
    def anchor(self) -> LogLine:
        """The line that identifies the event (for tracebacks: the exception line)."""
        return self.lines[-1] if self.kind == "traceback" else self.lines[0]


class Evidence(_Model):
    """A log line cited as evidence, in the contract's shape; or a Flight Recorder dump entry (``kind="dump"``)."""

    file: str = Field(description="the masked log file; for a dump entry, the masked dump file name")
    line: int = Field(description="1-based line number; 0 for a dump entry (a dump has no lines: record_id names the entry)")
    rank: int | None = None
    text: str = Field(description="the masked line; for a dump entry, a summary of it written by diagnose")
    kind: Literal["log", "dump"] = Field(default="log", description="log: a line of a text log; dump: a Flight Recorder dump entry")
    record_id: int | None = Field(
        default=None, description="dump entries only: the entry's record_id; None when the fact comes from the dump's pg_status"
    )


class Finding(_Model):
    """A signature of an encyclopedia entry that matched an event."""

    entry_id: str
    signature: str = Field(description="the pattern that matched")
    role: Role
    weight: float = Field(description="specificity of the signature, 0-1")
    rank: int | None = None
    rank_named: bool = Field(default=False, description="the message itself names the rank (Horovod's 'missing ranks: 3'), not a prefix")
    host: str | None = None
    timestamp: float | None = None
    order: int = Field(description="position of the event in reading order (file order, then line)")
    evidence: LogLine


class Candidate(_Model):
    """A possible root cause, scored."""

    id: str
    score: float = Field(ge=0.0, le=1.0)


class RootCause(_Model):
    """The chosen root cause."""

    id: str = Field(description="an encyclopedia id, or 'unknown'")
    title: str
    confidence: float = Field(ge=0.0, le=1.0)


class Collateral(_Model):
    """Failures that are consequences of the root cause, grouped."""

    id: str = Field(description="encyclopedia id of the collateral pattern")
    ranks: list[int] = Field(default_factory=list)
    count: int
    summary: str


class Redactions(_Model):
    """What the redactor masked."""

    total: int = 0
    by_type: dict[str, int] = Field(default_factory=dict)


class FlightRecorderVerdict(_Model):
    """What the Flight Recorder dumps say, when the input had dumps: who the others wait for, in which group and collective."""

    kind: Literal["hang", "mismatch", "missing-dump", "none"]
    initiating_ranks: list[int] = Field(default_factory=list, description="the ranks the others wait for (or the odd ones out)")
    decided: bool = Field(description="True when the dumps chose the root cause and ranks; False when the log's own evidence did")
    process_group: str | None = Field(default=None, description="the group's description as the dumps give it (masked), e.g. default_pg")
    process_group_name: str | None = Field(default=None, description="the group's name (its global id in the dumps)")
    process_group_size: int | None = None
    collective: str | None = Field(default=None, description="the op the waiting ranks are blocked at, e.g. all_reduce")
    sequence: int | None = Field(default=None, description="its sequence number in the group")
    sequence_kind: Literal["collective", "p2p"] | None = None
    waiting_ranks: list[int] = Field(default_factory=list)
    missing_dumps: list[int] = Field(default_factory=list, description="ranks of the group(s) that left no dump")
    dumps: int = Field(description="how many dumps were read")
    world_size: int = 0
    reason: str


class Diagnosis(_Model):
    """The result: the public JSON contract of ``diagnose log --json``."""

    root_cause: RootCause
    candidates: list[Candidate] = Field(default_factory=list, description="best first; root cause first")
    initiating_rank: int | None = None
    initiating_host: str | None = None
    initiating_ranks: list[int] = Field(
        default_factory=list, description="every initiating rank, initiating_rank first (several when the dumps name several)"
    )
    evidence: list[Evidence] = Field(default_factory=list)
    collateral: list[Collateral] = Field(default_factory=list)
    mechanism: str = ""
    fix: list[str] = Field(default_factory=list)
    verify: list[str] = Field(default_factory=list)
    redactions: Redactions = Field(default_factory=Redactions)
    backend: str = "rules"
    next_run: list[str] = Field(default_factory=list, description="what to turn on before the next run")
    notes: list[str] = Field(default_factory=list, description="fallbacks, flagged model output, hints")
    hang_reasoning: str | None = Field(default=None, description="why the timeouts point at the initiating rank (hangs only)")
    model_explanation: str | None = Field(
        default=None, description="the model's own explanation (unverified), shown next to the encyclopedia's mechanism"
    )
    flight_recorder: FlightRecorderVerdict | None = Field(
        default=None, description="what the Flight Recorder dumps say (only when the input had dumps)"
    )

    @property
    def is_unknown(self) -> bool:
        """True when no known failure was found."""
        return self.root_cause.id == "unknown"
