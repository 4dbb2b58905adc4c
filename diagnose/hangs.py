"""Hang reasoning: when collective timeouts are all there is, which rank stalled the others.

In order of strength:
1. the desync report's "lagging ranks";
2. a rank whose last enqueued work equals its last completed work never entered the stuck
   collective while the others did: the straggler;
3. ranks that were seen in the log but never timed out while the others did;
4. a rank behind on SeqNum;
5. the rank that first timed out ("signalled dumping" / named in "dump signal ... from rank N").
When every rank is stuck inside the same collective, no rank is to blame: the fabric is suspect.
Timeouts at one SeqNum with different OpTypes or sizes point to a collective mismatch.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field

from diagnose.parse.model import ParsedLog
from diagnose.schema import Event


@dataclass
class HangVerdict:
    """What the timeouts say: the suspect rank, why, the evidence events, and a mismatch if seen."""

    rank: int | None
    reason: str
    evidence: list[Event] = field(default_factory=list)
    mismatch: bool = False
    timed_out_ranks: list[int] = field(default_factory=list)
    summary: str = ""


def _events(log: ParsedLog, kind: str) -> list[Event]:
    return [e for e in log.events if e.kind == kind]


def _watchdog_summary(watchdogs: list[Event], ranks: list[int]) -> str:
    ops = Counter((e.fields.get("OpType", "?"), e.fields.get("SeqNum", "?")) for e in watchdogs)
    (op, seq), _ = ops.most_common(1)[0]
    return f"{len(ranks)} rank(s) timed out in {op} SeqNum {seq}"


def analyse_hang(log: ParsedLog) -> HangVerdict | None:
    """A verdict when the log holds collective timeouts, else None."""
    watchdogs = _events(log, "watchdog")
    statuses = _events(log, "watchdog_status")
    if not watchdogs and not statuses:
        return None
    timed_out = sorted({e.rank for e in (watchdogs or statuses) if e.rank is not None})
    summary = _watchdog_summary(watchdogs, timed_out) if watchdogs else f"{len(timed_out)} rank(s) timed out"
    verdict = HangVerdict(rank=None, reason="", timed_out_ranks=timed_out, summary=summary)

    by_seq: dict[str, set[tuple[str, str]]] = {}
    for event in watchdogs:
        shape = (event.fields.get("OpType", ""), event.fields.get("NumelIn", ""))
        by_seq.setdefault(event.fields.get("SeqNum", ""), set()).add(shape)
    odd = [seq for seq, shapes in by_seq.items() if len(shapes) > 1]
    if odd:
        verdict.mismatch = True
        shapes = Counter((e.fields.get("OpType", ""), e.fields.get("NumelIn", "")) for e in watchdogs
                         if e.fields.get("SeqNum") == odd[0])
        minority = [e for e in watchdogs if e.fields.get("SeqNum") == odd[0]
                    and shapes[(e.fields.get("OpType", ""), e.fields.get("NumelIn", ""))] == min(shapes.values())]
        verdict.rank = minority[0].rank
        verdict.evidence = minority[:2]
        verdict.reason = f"ranks disagree on collective SeqNum {odd[0]}: {sorted(shapes)}"
        return verdict

    for event in _events(log, "lagging"):
        ranks = [int(r) for r in event.fields.get("ranks", "").split(",") if r]
        if ranks:
            verdict.rank, verdict.evidence = ranks[0], [event]
            verdict.reason = f"the desync report names rank(s) {ranks} as lagging"
            return verdict

    idle = [e for e in statuses if e.fields.get("last_enqueued") == e.fields.get("last_completed")]
    busy = [e for e in statuses if e.fields.get("last_enqueued") != e.fields.get("last_completed")]
    if idle and busy:
        verdict.rank, verdict.evidence = idle[0].rank, [idle[0], busy[0]]
        verdict.reason = (f"rank {idle[0].rank} had completed all the work it enqueued "
                          f"({idle[0].fields.get('last_completed')}) while others were inside a collective: "
                          "it never entered the collective")
        return verdict

    silent = sorted(set(log.ranks) - set(timed_out))
    if timed_out and silent and len(silent) <= max(1, len(log.ranks) // 8):
        verdict.rank = silent[0]
        verdict.evidence = watchdogs[:1]
        verdict.reason = (f"{len(timed_out)} ranks timed out waiting in a collective; rank(s) {silent} did not: "
                          "they never joined it")
        return verdict

    seqs = {e.rank: int(e.fields["SeqNum"]) for e in watchdogs if e.rank is not None and e.fields.get("SeqNum", "").isdigit()}
    if len(set(seqs.values())) > 1:
        behind = min(seqs, key=lambda r: seqs[r])
        verdict.rank = behind
        verdict.evidence = [e for e in watchdogs if e.rank == behind][:1]
        verdict.reason = f"rank {behind} is behind on SeqNum ({seqs[behind]} vs {max(seqs.values())})"
        return verdict

    if busy and not idle and len(busy) >= 2:
        verdict.reason = "every rank that reported is stuck inside the same collective: suspect the network fabric"
        verdict.evidence = busy[:2]
        return verdict

    for kind in ("dump_from_rank", "dump_first"):
        events = _events(log, kind)
        if events:
            first = events[0]
            verdict.rank = int(first.fields["from_rank"]) if kind == "dump_from_rank" else first.rank
            verdict.evidence = [first]
            verdict.reason = f"rank {verdict.rank} was the first to time out and signal the flight-recorder dump"
            return verdict
    verdict.evidence = watchdogs[:1]
    verdict.reason = "timeouts only; no rank stands out"
    return verdict
