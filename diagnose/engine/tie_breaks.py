"""Tie-breakers for entries that share signatures and differ only in how the failure spreads.

NaN lines look the same whether one rank produced the NaN first (``nan-on-one-rank``: a failing GPU,
a bad shard) or every rank diverged together (``loss-divergence-nan``). The difference is in the
ranks: one rank well ahead of the others, or all of them at once.

An OOM line with the allocator's accounting matches both ``cuda-oom`` and ``cuda-memory-fragmentation``: the
captured numbers decide (``diagnose.engine.memory``), and a minor trapped amount becomes a note on ``cuda-oom``.

A bare ``OSError: [Errno 28] No space left on device`` (no file named) is what a shared-memory allocation raises
too (multiprocessing's SemLock, a DataLoader's tensors in /dev/shm): next to the DataLoader's "out of shared
memory" it is ``shm-exhausted``, not a full disk.

Two findings that no signature can weigh alone are decided in code next to their entry: a loss scale driven to its
floor (``diagnose.engine.numerics``) and pickle running out of data inside ``torch.load`` (``diagnose.engine.checkpoints``).

A rank that times out fetching the NCCL unique id from rank 0 inside a ``barrier()`` (transformers'
``main_process_first``, an ``if rank != 0: barrier()``) waited at the run's first collective for a rank that was still
busy: the communicator is created lazily by that barrier, so the timeout names a late rank, a straggler, not a
communicator that failed to form. The same holds for any store read that timed out inside a barrier (a store wait,
c10d's ``waitForInput`` warning): the process group was made, so the store was reachable and a rank was late.
"""

from __future__ import annotations

import re

from diagnose.engine import checkpoints, memory, numerics
from diagnose.engine.candidates import Scored, chronological
from diagnose.engine.duplicate_ranks import apply_duplicate_ranks
from diagnose.engine.stragglers import WAITING_FRAME, apply_straggler
from diagnose.parse.parsed_log import ParsedLog
from diagnose.schema import Finding

DISK = "disk-full"
SHM = "shm-exhausted"
_NO_FILE = re.compile(r"No space left on device\s*$")
"""ENOSPC with no path after it: the errno alone, as a semaphore or shared-memory segment raises it."""
INIT = "nccl-init-failure"
RENDEZVOUS = "rendezvous-failure"
STRAGGLER = "straggler-rank"
_STORE_TIMEOUT = re.compile(
    r"retr(?:ie|ei)ving ncclUniqueId from \[\d+\].*got error(?:: (?:Socket Timeout|wait timeout)|\s*$)"
    r"|(?:DistStoreError|RuntimeError): (?:Socket Timeout|wait timeout after \d+ms)"
    r"|waitForInput: (?:socket (?:.* )?timed out after \d+ms|poll for socket .* returned 0, likely a timeout)"
)
"""A store read that timed out: the waiting rank's report that the root never published the NCCL id in time (a bare "got
error" is the timeout's older form), a store wait for a key nobody set, c10d's socket warning under either."""
BARRIER_LOOKBACK = 40
"""Lines above the timeout to look for the barrier frame (tracebacks of several ranks interleave)."""
ONE_RANK = "nan-on-one-rank"
ALL_RANKS = "loss-divergence-nan"
SHIFT = 0.15
LEAD_SECONDS = 1.0


def _first_per_rank(findings: list[Finding]) -> list[Finding]:
    seen: dict[int | None, Finding] = {}
    for finding in chronological(findings):
        seen.setdefault(finding.rank, finding)
    return chronological(list(seen.values()))


def nan_spread(log: ParsedLog, findings: list[Finding]) -> str:
    """Which NaN entry the ranks point to."""
    # a NaN line that names rank N proves a world of at least N+1 ranks, even when no other rank spoke
    world = max([log.world_size(), *(f.rank + 1 for f in findings if f.rank is not None)])
    if world <= 1:
        return ALL_RANKS
    firsts = [f for f in _first_per_rank(findings) if f.rank is not None]
    if len(firsts) <= 1:
        return ONE_RANK
    lead, runner_up = firsts[0], firsts[1]
    if lead.timestamp is not None and runner_up.timestamp is not None:
        return ONE_RANK if runner_up.timestamp - lead.timestamp > LEAD_SECONDS else ALL_RANKS
    same_file = lead.evidence.source == runner_up.evidence.source
    gap = runner_up.evidence.line - lead.evidence.line if same_file else 0
    return ONE_RANK if gap > world else ALL_RANKS


def fragmentation_or_full(ranked: list[Scored]) -> list[Scored]:
    """Keep ``cuda-memory-fragmentation`` only when its numbers say so; else ``cuda-oom``, with a note."""
    by_id = {s.entry_id: s for s in ranked}
    fragmented = by_id.get(memory.FRAGMENTATION)
    if fragmented is None:
        return ranked
    numbers = next((a for a in map(memory.accounting, chronological(fragmented.findings)) if a is not None), None)
    if numbers is None:
        return ranked
    oom = by_id.get(memory.OOM)
    if numbers.fragmented:
        if oom is not None:
            oom.score = round(max(0.0, min(oom.score, fragmented.score - SHIFT)), 3)
        return ranked
    if oom is None:
        oom = Scored(memory.OOM, fragmented.score, list(fragmented.findings), fragmented.earliest)
        ranked = [*ranked, oom]
    oom.score = max(oom.score, fragmented.score)
    note = numbers.note()
    if note:
        oom.notes.append(note)
    return [s for s in ranked if s is not fragmented]


def shared_memory_or_disk(ranked: list[Scored]) -> list[Scored]:
    """A full disk known only from bare ENOSPC lines yields to shared-memory exhaustion found in the same log."""
    by_id = {s.entry_id: s for s in ranked}
    disk, shm = by_id.get(DISK), by_id.get(SHM)
    if disk is not None and shm is not None and all(_NO_FILE.search(f.evidence.text) for f in disk.findings):
        shm.score = max(shm.score, disk.score)
        shm.earliest = shm.earliest or disk.earliest
        disk.score = round(max(0.0, shm.score - SHIFT), 3)
    return ranked


def _in_barrier(log: ParsedLog, finding: Finding) -> bool:
    return any(WAITING_FRAME.search(text) for text in log.lines_above(finding.evidence, BARRIER_LOOKBACK))


def late_at_first_barrier(ranked: list[Scored], log: ParsedLog) -> list[Scored]:
    """``nccl-init-failure`` or ``rendezvous-failure`` known only from store timeouts inside a barrier yields to
    ``straggler-rank``: the process group already existed, and the store read waited for a rank that was still busy."""
    by_id = {s.entry_id: s for s in ranked}
    for entry_id in (INIT, RENDEZVOUS):
        waited = by_id.get(entry_id)
        if waited is None or not waited.findings or not all(_STORE_TIMEOUT.search(f.evidence.text) for f in waited.findings):
            continue
        if not any(_in_barrier(log, f) for f in waited.findings):
            continue
        straggler = by_id.get(STRAGGLER)
        if straggler is None:
            straggler = by_id[STRAGGLER] = Scored(STRAGGLER, waited.score, list(waited.findings), waited.earliest)
            ranked = [*ranked, straggler]
        straggler.score = round(min(1.0, max(straggler.score, waited.score) + SHIFT), 3)
    return ranked


def break_ties(ranked: list[Scored], log: ParsedLog) -> list[Scored]:
    """Adjust the scores of entries that share signatures, apply the numeric discriminators, then re-sort."""
    ranked = late_at_first_barrier(shared_memory_or_disk(fragmentation_or_full(ranked)), log)
    for found in (numerics.loss_scale_collapse(log), checkpoints.truncated_checkpoint(log)):
        if found is None:
            continue
        known = next((s for s in ranked if s.entry_id == found.entry_id), None)
        if known is None:
            ranked = [*ranked, found]
        else:
            known.score = max(known.score, found.score)
            known.notes.extend(note for note in found.notes if note not in known.notes)
    by_id = {s.entry_id: s for s in ranked}
    if ONE_RANK in by_id or ALL_RANKS in by_id:
        nan_findings = [f for s in ranked if s.entry_id in (ONE_RANK, ALL_RANKS) for f in s.findings]
        winner = nan_spread(log, nan_findings)
        loser = ALL_RANKS if winner == ONE_RANK else ONE_RANK
        if winner not in by_id:
            by_id[winner] = Scored(winner, by_id[loser].score, list(by_id[loser].findings), by_id[loser].earliest)
            ranked = [*ranked, by_id[winner]]
        by_id[winner].score = round(min(1.0, by_id[winner].score + SHIFT), 3)
        if loser in by_id:
            by_id[loser].score = round(max(0.0, by_id[loser].score - SHIFT), 3)
    return apply_duplicate_ranks(apply_straggler(sorted(ranked, key=lambda s: -s.score), log), log)
