"""Two processes that announce the same global rank: the process group can never form.

Lightning prints each process's place as it joins (``Initializing distributed: GLOBAL_RANK: 3, MEMBER: 4/8``; 1.x:
``initializing ddp: ...``); ``rendezvous-failure``'s noise signature captures the rank (``declared``) and the world
size (``world``). When one rank is announced twice while another rank of the same world never is, two processes were
given the same rank (``srun`` tasks per node that do not match the Trainer's ``devices``, so every node computes ranks
0-3): the missing ranks never join, and the group waits until its timeout. A log holding two whole attempts announces
every rank twice and none is missing: no finding. A run that ended only as a hang ends (HANG_ENDINGS, or nothing
found) is named a rendezvous failure; any other failure stays the root cause, with the duplicates as a note.
"""

from __future__ import annotations

from collections import defaultdict

from diagnose.engine.candidates import Scored
from diagnose.engine.captures import captured
from diagnose.parse.parsed_log import ParsedLog
from diagnose.schema import Finding

ENTRY = "rendezvous-failure"
HANG_ENDINGS = frozenset({ENTRY, "nccl-timeout-hang", "elastic-teardown", "process-preempted", "user-interrupt"})
"""Endings a group that never formed explains: a timeout, the launcher's teardown, the scheduler or a person ending the wait."""
SCORE = 0.6
SHIFT = 0.05


def duplicate_ranks(log: ParsedLog) -> tuple[list[Finding], list[int], list[int]] | None:
    """(the announcements of ranks announced twice, those ranks, the ranks never announced), or None."""
    announced: dict[int, list[Finding]] = defaultdict(list)
    worlds: set[int] = set()
    for finding in log.findings:
        numbers = captured(finding, "declared", "world") if finding.entry_id == ENTRY and finding.role == "noise" else None
        if numbers is not None:
            announced[int(numbers[0])].append(finding)
            worlds.add(int(numbers[1]))
    if len(worlds) != 1:
        return None
    twice = sorted(rank for rank, seen in announced.items() if len(seen) > 1)
    missing = sorted(set(range(worlds.pop())) - set(announced))
    if not twice or not missing:
        return None
    return [f for rank in twice for f in announced[rank]], twice, missing


def _listed(ranks: list[int]) -> str:
    return ", ".join(map(str, ranks))


def apply_duplicate_ranks(ranked: list[Scored], log: ParsedLog) -> list[Scored]:
    """Name the rendezvous failure when ranks were announced twice and the run ended as a hang; else a note."""
    found = duplicate_ranks(log)
    if found is None:
        return ranked
    findings, twice, missing = found
    note = f"ranks {_listed(twice)} were each announced by two processes and ranks {_listed(missing)} never joined"
    if ranked and ranked[0].entry_id not in HANG_ENDINGS:
        ranked[0].notes.append(f"also: {note}")
        return ranked
    promoted = [f.model_copy(update={"role": "initiating"}) for f in findings]
    score = min(1.0, max((s.score for s in ranked), default=0.0) + SHIFT)
    others = [s for s in ranked if s.entry_id != ENTRY]
    return [Scored(ENTRY, round(max(score, SCORE), 3), promoted, earliest=True, notes=[note]), *others]
