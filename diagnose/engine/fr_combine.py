"""Combine the log's diagnosis with what the Flight Recorder dumps say.

The rule, in order:

- The log has an error (a root cause that starts failures on its own) on a rank the dumps name: the log wins.
  Its root cause stays; the dumps' ranks, group, collective and entries are added as evidence.
- The log alone gives a hang (collective timeouts), ``unknown``, only collateral (the launcher's teardown), or
  a weak candidate (confidence under ``WEAK``): the dumps explain it. Their root cause (``nccl-timeout-hang`` or
  ``collective-mismatch``) and ranks replace the log's; the log's evidence is kept after the dumps'.
- The log has a strong error on a rank the dumps do not name: the log wins, and a note says what the dumps name.
- The dumps show nobody waiting, or only missing dumps with no root cause: the log stands; the dumps are noted
  (and, with nothing in the log, the ranks that left no dump become the initiating ranks, unless most dumps
  are missing: then too few were given to tell).
"""

from __future__ import annotations

from diagnose.encyclopedia.entries import Entry
from diagnose.engine.fr_models import FREvidence, FRVerdict
from diagnose.schema import Candidate, Diagnosis, Evidence, FlightRecorderVerdict, RootCause

__all__ = ["HANG_FAMILY", "WEAK", "combine", "dump_evidence", "sync_ranks"]

HANG_FAMILY = frozenset({"nccl-timeout-hang", "collective-mismatch", "straggler-rank", "unknown"})
"""Root causes the log can only infer from timeouts: the dumps' view of the same hang is more direct."""
WEAK = 0.5
"""A log candidate under this confidence gives way to the dumps."""
CONFIDENCE = {"hang": 0.9, "mismatch": 0.9}
MAX_EVIDENCE = 12


def dump_evidence(ev: FREvidence) -> Evidence:
    """A dump entry in the contract's shape: ``line`` 0 (a dump has no lines), ``record_id`` names the entry."""
    where = ev.pg_desc or ev.pg_name
    if ev.state == "absent":
        text = f"rank {ev.rank} left no dump (group {where})" if ev.role == "missing-dump" else f"rank {ev.rank}: nothing recorded"
    else:
        what = f"{ev.op} #{ev.seq_id} ({ev.seq_kind}), state {ev.state}" if ev.op else "no entry past the last collective (pg_status)"
        text = f"rank {ev.rank}, group {where}: {what} [{ev.role}]"
    if ev.note:
        text += f"; {ev.note}"
    return Evidence(file=ev.file, line=0, rank=ev.rank, text=text, kind="dump", record_id=ev.record_id)


def _summary(verdict: FRVerdict, decided: bool, dumps: int) -> FlightRecorderVerdict:
    pg, coll = verdict.process_group, verdict.collective
    waiting = sorted({r for f in verdict.findings for r in f.waiting_ranks})
    return FlightRecorderVerdict(
        kind=verdict.kind,
        initiating_ranks=verdict.initiating_ranks,
        decided=decided,
        process_group=(pg.desc or pg.name) if pg else None,
        process_group_name=pg.name if pg else None,
        process_group_size=len(pg.ranks) if pg else None,
        collective=coll.op if coll else None,
        sequence=coll.seq_id if coll else None,
        sequence_kind=coll.seq_kind if coll else None,
        waiting_ranks=waiting,
        missing_dumps=verdict.missing_dumps,
        dumps=dumps,
        world_size=verdict.world_size,
        reason=verdict.reason,
    )


def _log_wins(d: Diagnosis, verdict: FRVerdict, entries: dict[str, Entry]) -> bool:
    entry = entries.get(d.root_cause.id)
    if d.is_unknown or d.root_cause.id in HANG_FAMILY or entry is None or entry.kind == "collateral":
        return False
    if verdict.root_cause_id is None:  # nobody waits, or only missing dumps: nothing to replace the log's cause with
        return True
    return d.initiating_rank in verdict.initiating_ranks or d.root_cause.confidence >= WEAK


def combine(d: Diagnosis, verdict: FRVerdict, entries: dict[str, Entry], hosts: dict[int, str] | None = None) -> Diagnosis:
    """The diagnosis with the dumps' verdict folded in (see the module's rule); pure."""
    dumped = len(verdict.files)
    cited = [dump_evidence(ev) for ev in verdict.evidence]
    if verdict.kind == "missing-dump" and len(verdict.missing_dumps) * 2 > verdict.world_size:
        note = (
            f"only {dumped} of {verdict.world_size} ranks' Flight Recorder dumps were given: too few to tell who died "
            "first (pass the whole folder of dumps)"
        )
        return d.model_copy(update={"flight_recorder": _summary(verdict, False, dumped), "notes": [*d.notes, note]})
    if verdict.kind == "none":
        note = f"Flight Recorder dumps ({dumped} files): {verdict.reason}"
        return d.model_copy(update={"flight_recorder": _summary(verdict, False, dumped), "notes": [*d.notes, note]})
    if _log_wins(d, verdict, entries):
        agree = d.initiating_rank in verdict.initiating_ranks
        ranks = [d.initiating_rank] if d.initiating_rank is not None else []
        if agree:
            ranks += [r for r in verdict.initiating_ranks if r not in ranks]
            note = f"the Flight Recorder dumps agree: {verdict.reason}"
        else:
            named = verdict.initiating_ranks
            note = f"the Flight Recorder dumps name rank(s) {named} ({verdict.reason}); the log's error is the stronger evidence"
        return d.model_copy(
            update={
                "initiating_ranks": ranks,
                "evidence": [*d.evidence, *cited][: max(MAX_EVIDENCE, len(d.evidence))],
                "flight_recorder": _summary(verdict, False, dumped),
                "notes": [*d.notes, note],
            }
        )
    hosts = hosts or {}
    first = verdict.initiating_ranks[0] if verdict.initiating_ranks else None
    base = {
        "initiating_rank": first,
        "initiating_ranks": verdict.initiating_ranks,
        "initiating_host": hosts.get(first) if first is not None else None,
        "evidence": [*cited, *d.evidence][:MAX_EVIDENCE],
        "flight_recorder": _summary(verdict, True, dumped),
        "hang_reasoning": verdict.reason,
    }
    entry = entries.get(verdict.root_cause_id or "")
    if entry is None:  # missing dumps only: no cause to name, but the ranks that left none most likely died first
        return d.model_copy(update=base | {"notes": [*d.notes, f"Flight Recorder dumps: {verdict.reason}"]})
    was = "" if d.is_unknown else f" (the log alone suggested {d.root_cause.id}, confidence {d.root_cause.confidence:.2f})"
    candidates = [Candidate(id=entry.id, score=CONFIDENCE[verdict.kind])] + [c for c in d.candidates if c.id != entry.id]
    return d.model_copy(
        update=base
        | {
            "root_cause": RootCause(id=entry.id, title=entry.title, confidence=CONFIDENCE[verdict.kind]),
            "candidates": candidates,
            "mechanism": entry.mechanism,
            "fix": entry.fix,
            "verify": entry.verify,
            "next_run": entry.next_run,
            "notes": [*d.notes, f"root cause and ranks from the Flight Recorder dumps ({dumped} files){was}"],
        }
    )


def sync_ranks(d: Diagnosis) -> Diagnosis:
    """``initiating_ranks`` filled from ``initiating_rank`` (log-only diagnoses), and kept with it first."""
    if d.initiating_rank is None:
        return d if not d.initiating_ranks else d.model_copy(update={"initiating_rank": d.initiating_ranks[0]})
    if d.initiating_ranks[:1] == [d.initiating_rank]:
        return d
    rest = [r for r in d.initiating_ranks if r != d.initiating_rank]
    return d.model_copy(update={"initiating_ranks": [d.initiating_rank, *rest]})
