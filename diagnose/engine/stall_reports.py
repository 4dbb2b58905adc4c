"""Horovod's stall inspector as hang evidence: the reports its coordinator prints while collectives wait.

Before 0.16 a report lists, per stalled tensor, the ranks that submitted it (``[ready ranks: ...]``): the one rank of the
run in no list never reached any. From 0.20 it lists each missing rank with the tensors it has not submitted (``Missing
ranks:`` / ``Stalled ranks:``): two ranks missing none of the same tensors wait in different collectives.
"""

from __future__ import annotations

import re

from diagnose.engine.hang_models import HangVerdict, Timeouts, world_ranks
from diagnose.parse.parsed_log import ParsedLog
from diagnose.schema import Event

MAX_LISTED = 64
"""Lines under a Horovod stall report's header read as its ranks, at most."""
_LISTED = re.compile(r"(?:^|[:>]\s?)(\d+)!?: \[([^\]]*)\]\s*$")
"""One rank of a Horovod stall report (0.20+): ``1: [allreduce.a, allreduce.b ...]``, ``3!: [...]`` when it is to be shut down."""


def never_ready(t: Timeouts, verdict: HangVerdict) -> bool:
    """Horovod's stall report before 0.16 lists, for each stalled tensor, the ranks that submitted it: the one rank of the
    run in no list (the world size, else the ranks seen) never reached any of them. Ranks missing from different
    tensors name no single one."""
    reports = t.events("ready_ranks")
    ready = {int(rank) for event in reports for rank in event.fields.get("ranks", "").split(",") if rank}
    missing = sorted(set(world_ranks(t.log, sorted(ready))) - ready) if ready else []
    if len(missing) != 1:
        return False
    verdict.rank = missing[0]
    verdict.evidence = reports[:1]
    verdict.reason = f"Horovod's stall report lists ranks {sorted(ready)} as ready: rank {missing[0]} never submitted the tensors"
    return True


def _stall_report(log: ParsedLog, header: Event) -> dict[int, frozenset[str]]:
    """The ranks a Horovod stall report lists under its header, each with the tensors it has not submitted."""
    anchor = header.lines[0]
    listed: dict[int, frozenset[str]] = {}
    for step in range(1, MAX_LISTED + 1):
        text = log.line_text(anchor.source, anchor.line + step)
        match = _LISTED.search(text) if text is not None else None
        if match is None:
            break
        tensors = match.group(2).removesuffix("...").split(",")
        listed[int(match.group(1))] = frozenset(t.strip() for t in tensors if t.strip())
    return listed


def stalled_on_different_tensors(t: Timeouts, verdict: HangVerdict) -> bool:
    """Horovod's stall report (0.20+) lists each rank with the tensors it has not submitted: two ranks missing none of
    the same tensors are blocked in different collectives, a mismatch (the latest report decides)."""
    reports = t.events("stall_report")
    listed = _stall_report(t.log, reports[-1]) if reports else {}
    ranks = sorted(listed)
    apart = [(a, b) for i, a in enumerate(ranks) for b in ranks[i + 1 :] if listed[a] and listed[b] and not listed[a] & listed[b]]
    if not apart:
        return False
    a, b = apart[0]
    verdict.mismatch = True
    verdict.evidence = reports[-1:]
    verdict.reason = (
        f"Horovod's stall report: rank {a} has not submitted {sorted(listed[a])[:2]}, rank {b} {sorted(listed[b])[:2]}: "
        "they wait in different collectives"
    )
    return True
