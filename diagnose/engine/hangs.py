"""Hang reasoning: when collective timeouts are all there is, which rank stalled the others.

``STRATEGIES`` is the ordered list of ways to read the timeouts, strongest first; the first that
names a rank (or a fabric-wide stall) decides. When none does, no rank stands out.
"""

from __future__ import annotations

from collections import Counter

from diagnose.engine.hang_models import HangVerdict, Strategy, Timeouts, world_ranks
from diagnose.engine.stall_reports import never_ready, stalled_on_different_tensors
from diagnose.parse.parsed_log import ParsedLog
from diagnose.schema import Event

SILENT_SHARE = 8
"""Ranks that never timed out count as the culprits only when they are at most 1/8 of the ranks seen."""
MIN_TIMEOUTS_UNSTATED = 3
"""Without the launcher's world size, ranks timing out before a rank counts as silent: two ranks of an excerpt that
happen to be shown (0 and 2) say nothing about rank 1."""


SIZES_MUST_AGREE = frozenset({"ALLREDUCE", "BROADCAST", "REDUCE"})
"""Ops whose element counts are the same on every rank; all_to_all, gathers, scatters and p2p may differ."""


def _shape(event: Event) -> tuple[str, str]:
    op = event.fields.get("OpType", "")
    return op, event.fields.get("NumelIn", "") if op.upper() in SIZES_MUST_AGREE else ""


def _slot(event: Event) -> tuple[str, str]:
    """(process group, SeqNum): SeqNums count per process group, so only one group's are comparable."""
    return event.fields.get("pg", ""), event.fields.get("SeqNum", "")


def mismatched_collectives(t: Timeouts, verdict: HangVerdict) -> bool:
    """Ranks of one process group blocked in different collectives (op, or size where sizes must agree) at one SeqNum."""
    by_slot: dict[tuple[str, str], set[tuple[str, str]]] = {}
    for event in t.watchdogs:
        by_slot.setdefault(_slot(event), set()).add(_shape(event))
    odd = [slot for slot, shapes in by_slot.items() if len(shapes) > 1]
    if not odd:
        return False
    at_seq = [e for e in t.watchdogs if _slot(e) == odd[0]]
    shapes = Counter(_shape(e) for e in at_seq)
    minority = [e for e in at_seq if shapes[_shape(e)] == min(shapes.values())]
    verdict.mismatch = True
    verdict.rank = minority[0].rank
    verdict.evidence = minority[:2]
    verdict.reason = f"ranks disagree on collective SeqNum {odd[0][1]}: {sorted(shapes)}"
    return True


def desync_report(t: Timeouts, verdict: HangVerdict) -> bool:
    """The desync report's "lagging ranks"."""
    for event in t.events("lagging"):
        ranks = [int(r) for r in event.fields.get("ranks", "").split(",") if r]
        if ranks:
            verdict.rank, verdict.evidence = ranks[0], [event]
            verdict.reason = f"the desync report names rank(s) {ranks} as lagging"
            return True
    return False


def never_entered(t: Timeouts, verdict: HangVerdict) -> bool:
    """A rank whose last enqueued work equals its last completed work never entered the collective the others are in."""
    idle = [e for e in t.statuses if e.fields.get("last_enqueued") == e.fields.get("last_completed")]
    busy = [e for e in t.statuses if e.fields.get("last_enqueued") != e.fields.get("last_completed")]
    if not (idle and busy):
        return False
    verdict.rank, verdict.evidence = idle[0].rank, [idle[0], busy[0]]
    verdict.reason = (
        f"rank {idle[0].rank} had completed all the work it enqueued "
        f"({idle[0].fields.get('last_completed')}) while others were inside a collective: "
        "it never entered the collective"
    )
    return True


def silent_ranks(t: Timeouts, verdict: HangVerdict) -> bool:
    """A few ranks of the run that never timed out while the others did: they never joined (by elimination).

    The run's ranks come from the launcher's world size or, failing that, the contiguous ranks 0..highest seen,
    so a rank 0 that never printed a line is found as well as one that printed something else. With only the ranks
    seen to go by, it takes MIN_TIMEOUTS_UNSTATED ranks timing out.
    """
    world = world_ranks(t.log, t.timed_out)
    silent = sorted(set(world) - set(t.timed_out))
    enough = 2 if t.log.stated_world_size() is not None else MIN_TIMEOUTS_UNSTATED
    if not (len(t.timed_out) >= enough and silent and len(silent) <= max(1, len(world) // SILENT_SHARE)):
        return False
    verdict.rank = silent[0]
    verdict.evidence = t.watchdogs[:1]
    unseen = [rank for rank in silent if rank not in t.log.ranks]
    verdict.reason = (
        f"{len(t.timed_out)} of {len(world)} ranks timed out waiting in a collective; rank(s) {silent} did not"
        f"{' and never reported at all' if unseen else ''}: they never joined it"
    )
    return True


def behind_on_seqnum(t: Timeouts, verdict: HangVerdict) -> bool:
    """The one rank whose timed-out SeqNum is lower than every other's in the same process group (the group most ranks
    report); when several ranks share the lowest SeqNum, none of them is the one behind."""
    groups = Counter(e.fields.get("pg", "") for e in t.watchdogs)
    if not groups:
        return False
    group = groups.most_common(1)[0][0]
    seqs = {
        e.rank: int(e.fields["SeqNum"])
        for e in t.watchdogs
        if e.rank is not None and e.fields.get("SeqNum", "").isdigit() and e.fields.get("pg", "") == group
    }
    if len(set(seqs.values())) <= 1:
        return False
    lowest = min(seqs.values())
    behind_ranks = [rank for rank, seq in seqs.items() if seq == lowest]
    if len(behind_ranks) > 1:
        return False
    behind = behind_ranks[0]
    verdict.rank = behind
    verdict.evidence = [e for e in t.watchdogs if e.rank == behind][:1]
    verdict.reason = f"rank {behind} is behind on SeqNum ({seqs[behind]} vs {max(seqs.values())})"
    return True


def behind_on_enqueued(t: Timeouts, verdict: HangVerdict) -> bool:
    """The one rank whose last enqueued work is lower than every other's in the same process group: it never enqueued
    the collective the others are waiting in (the Flight Recorder's reading of ``pg_status``). When several ranks share
    the lowest count, none of them is the one behind."""
    groups = Counter(e.fields.get("pg", "") for e in t.statuses if e.rank is not None)
    if not groups:
        return False
    group = groups.most_common(1)[0][0]
    enqueued = {
        e.rank: int(e.fields["last_enqueued"])
        for e in t.statuses
        if e.rank is not None and e.fields.get("pg", "") == group and e.fields.get("last_enqueued", "").isdigit()
    }
    if len(enqueued) < 2 or len(set(enqueued.values())) <= 1:
        return False
    lowest = min(enqueued.values())
    behind_ranks = [rank for rank, count in enqueued.items() if count == lowest]
    if len(behind_ranks) > 1:
        return False
    behind = behind_ranks[0]
    verdict.rank = behind
    verdict.evidence = [e for e in t.statuses if e.rank == behind][:1]
    most = max(enqueued.values())
    verdict.reason = f"rank {behind} enqueued less work than the others ({lowest} vs {most}): it never entered their collective"
    return True


def fabric_stall(t: Timeouts, verdict: HangVerdict) -> bool:
    """Every rank that reported is inside the same collective: no rank to blame, suspect the network."""
    busy = [e for e in t.statuses if e.fields.get("last_enqueued") != e.fields.get("last_completed")]
    idle = [e for e in t.statuses if e.fields.get("last_enqueued") == e.fields.get("last_completed")]
    if not (busy and not idle and len(busy) >= 2):
        return False
    verdict.reason = "every rank that reported is stuck inside the same collective: suspect the network fabric"
    verdict.evidence = busy[:2]
    return True


def first_to_dump(t: Timeouts, verdict: HangVerdict) -> bool:
    """The rank that first timed out and signalled the flight-recorder dump."""
    for kind in ("dump_from_rank", "dump_first"):
        events = t.events(kind)
        if events:
            first = events[0]
            verdict.rank = int(first.fields["from_rank"]) if kind == "dump_from_rank" else first.rank
            verdict.evidence = [first]
            verdict.reason = f"rank {verdict.rank} was the first to time out and signal the flight-recorder dump"
            return True
    return False


STRATEGIES: list[tuple[str, Strategy]] = [
    ("mismatched collectives", mismatched_collectives),
    ("desync report", desync_report),
    ("never entered the collective", never_entered),
    ("never ready", never_ready),
    ("stalled on different tensors", stalled_on_different_tensors),
    ("silent ranks", silent_ranks),
    ("behind on SeqNum", behind_on_seqnum),
    ("behind on enqueued work", behind_on_enqueued),
    ("first to dump", first_to_dump),
    ("fabric stall", fabric_stall),
]
"""How to read timeouts, strongest first: a strategy that names a rank from what the log says comes before one that names none."""


def _summary(watchdogs: list[Event], ranks: list[int]) -> str:
    if not watchdogs:
        return f"{len(ranks)} rank(s) timed out" if ranks else ""
    ops = Counter((e.fields.get("OpType", "?"), e.fields.get("SeqNum", "?")) for e in watchdogs)
    (op, seq), _ = ops.most_common(1)[0]
    return f"{len(ranks)} rank(s) timed out in {op} SeqNum {seq}"


def analyse_hang(log: ParsedLog) -> HangVerdict | None:
    """A verdict when the log holds collective timeouts, or a stall report that names a rank or a mismatch, else None."""
    watchdogs = [e for e in log.events if e.kind == "watchdog"]
    statuses = [e for e in log.events if e.kind == "watchdog_status"]
    stall_reports = [e for e in log.events if e.kind in ("ready_ranks", "stall_report")]
    if not watchdogs and not statuses and not stall_reports:
        return None
    timed_out = sorted({e.rank for e in (watchdogs or statuses) if e.rank is not None})
    verdict = HangVerdict(rank=None, reason="", timed_out_ranks=timed_out, summary=_summary(watchdogs, timed_out))
    timeouts = Timeouts(log, watchdogs, statuses, timed_out)
    for _name, strategy in STRATEGIES:
        if strategy(timeouts, verdict):
            return verdict
    if not watchdogs and not statuses:  # a stall inspector's reports that name neither a rank nor a mismatch
        return None
    verdict.evidence = watchdogs[:1]
    verdict.reason = "timeouts only; no rank stands out"
    return verdict
