"""What a chat about a run with dumps answers from: the verdict and, per rank, ``stuck_in`` and ``last_completed``, bounded."""

from __future__ import annotations

from collections import Counter, defaultdict

from diagnose.engine.flight_recorder import analyze, last_completed, stuck_in_views
from diagnose.engine.fr_models import FRFacts, FRVerdict, LastCompletedAnswer
from diagnose.engine.fr_waits import group_views
from diagnose.parse.fr_model import RankDump

__all__ = ["FACT_ENTRIES", "FACT_REFS", "facts"]

FACT_ENTRIES = 5
"""Unfinished ops kept per rank."""
FACT_REFS = 2000
"""Last-completed records kept in all (a session store holds them)."""


def facts(dumps: list[RankDump], verdict: FRVerdict | None = None) -> FRFacts:
    """The verdict plus ``stuck_in`` for every rank with a dump and ``last_completed``: what the chat answers from.

    Bounded for a session store: at most ``FACT_ENTRIES`` unfinished ops per rank, and at most ``FACT_REFS``
    last-completed records, groups where the ranks disagree first (the others are counted in ``searched``).
    """
    views = group_views(dumps)
    stuck = {d.rank: stuck_in_views(dumps, d.rank, views) for d in dumps}
    for answer in stuck.values():
        answer.entries = answer.entries[:FACT_ENTRIES]
    return FRFacts(verdict=verdict or analyze(dumps), stuck=stuck, last_completed=_bounded(last_completed(dumps)))


def _bounded(answer: LastCompletedAnswer) -> LastCompletedAnswer:
    refs = [ref for rs in answer.by_rank.values() for ref in rs]
    if len(refs) <= FACT_REFS:
        return answer
    seqs: dict[str, set[int | None]] = defaultdict(set)
    for ref in refs:
        seqs[ref.pg_name].add(ref.seq_id)
    keep: set[str] = set()
    count = Counter(ref.pg_name for ref in refs)
    for name in sorted(seqs, key=lambda n: (len(seqs[n]) < 2, n)):
        if sum(count[k] for k in keep) + count[name] > FACT_REFS:
            break
        keep.add(name)
    by_rank = {r: [ref for ref in rs if ref.pg_name in keep] for r, rs in answer.by_rank.items()}
    left = len(seqs) - len(keep)
    return LastCompletedAnswer(
        status=answer.status,
        by_rank={r: rs for r, rs in by_rank.items() if rs},
        searched=f"{answer.searched}; {left} more group(s) left out, where ranks agree first",
    )
