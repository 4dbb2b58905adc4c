"""Which ranks the others wait for, from Flight Recorder dumps: hangs, mismatches and missing dumps.

``analyze(dumps) -> FRVerdict`` works per process group (by name and member ranks; the local ``pg_id``
differs across ranks). Within a group a rank is *blocked* at its lowest unfinished sequence number; it
*waits for* every member that never enqueued that collective (``pg_status`` last enqueued is lower, or the
dump has nothing for the group), every member whose dump is missing, and, for send/recv, the peer that
never posted the matching op. The initiating ranks are the waited-for ranks that wait for nobody
themselves (the ends of the waits-for graph; a cycle of waits names all its ranks), so a rank that merely
waits on the culprit is collateral.
Before that, ops at the same sequence number are compared within one group: op type always, dtypes for
collectives, sizes only where they must agree (never all_to_all(v), list all_gather/reduce_scatter,
gather/scatter, coalesced ops or send/recv); the odd ranks out are a ``collective-mismatch``.

``stuck_in(dumps, rank)`` and ``last_completed(dumps)`` answer the chat's questions with cited entries.
"""

from __future__ import annotations

from collections import Counter, defaultdict
from typing import Literal

from diagnose.engine.fr_models import (
    CollectiveRef,
    CompletedRef,
    FREvidence,
    FRFinding,
    FRVerdict,
    LastCompletedAnswer,
    ProcessGroupRef,
    SeqKind,
    StuckAnswer,
    VerdictKind,
)
from diagnose.engine.fr_waits import Block, Member, cite, collective_blocks, group_views, p2p_blocks, pg_ref, terminal
from diagnose.parse.fr_model import FREntry, PGInfo, RankDump
from diagnose.rank_ranges import rank_ranges

__all__ = [
    "CollectiveRef",
    "CompletedRef",
    "FREvidence",
    "FRFinding",
    "FRVerdict",
    "LastCompletedAnswer",
    "ProcessGroupRef",
    "StuckAnswer",
    "analyze",
    "last_completed",
    "stuck_in",
]

MAX_EVIDENCE = 12
SIZE_MUST_AGREE = frozenset(
    {"all_reduce", "allreduce", "broadcast", "reduce", "barrier", "_all_gather_base", "all_gather_into_tensor"}
    | {"_reduce_scatter_base", "reduce_scatter_tensor", "allgather_into_tensor", "reduce_scatter_base"}
)
ROOT_CAUSE = {"hang": "nccl-timeout-hang", "mismatch": "collective-mismatch"}


def _mismatch(info: PGInfo, members: dict[int, Member]) -> FRFinding | None:
    """The first sequence number where ranks of this group recorded different ops, dtypes or (where they must agree) sizes."""
    at: dict[int, dict[int, list[FREntry]]] = defaultdict(lambda: defaultdict(list))
    for rank, m in members.items():
        for e in m.entries:
            if not e.is_p2p:
                at[e.collective_seq_id][rank].append(e)
    for seq in sorted(at):
        single = {r: es[0] for r, es in at[seq].items() if len(es) == 1 and "coalesced" not in es[0].op}
        if len(single) < 2 or len({_fingerprint(e) for e in single.values()}) == 1:
            continue
        for what, key in (("op type", _op_key), ("dtypes", _dtype_key), ("sizes", _size_key)):
            prints = {r: key(e) for r, e in single.items()}
            if any(p is None for p in prints.values()) or len(set(prints.values())) < 2:
                continue
            common, count = Counter(prints.values()).most_common(1)[0]
            odd = sorted(r for r, p in prints.items() if p != common) if count * 2 > len(prints) else sorted(prints)
            evidence = [cite(members[r], info, e, "mismatch", f"{what}: {key(e)}") for r, e in sorted(single.items())][:MAX_EVIDENCE]
            first = single[min(single)]
            shown = ", ".join(f"rank {r}: {prints[r]}" for r in sorted(prints)[:8])
            return FRFinding(
                kind="mismatch",
                process_group=pg_ref(info),
                collective=CollectiveRef(op=first.op, seq_id=seq, seq_kind="collective", profiling_name=first.profiling_name),
                initiating_ranks=odd,
                initiating_state={r: "odd-one-out" for r in odd},
                evidence=evidence,
                reason=f"{info.desc or info.name} collective #{seq}: ranks disagree on {what} ({shown})"
                + ("" if count * 2 > len(prints) else "; no majority, so every rank is named"),
            )
    return None


def _fingerprint(e: FREntry) -> tuple[object, ...]:
    """What must agree across ranks at one sequence number (sizes only for ops whose sizes must match)."""
    return (e.op, e.input_dtypes, (e.input_sizes, e.output_sizes) if e.op in SIZE_MUST_AGREE else None)


def _op_key(e: FREntry) -> str | None:
    return e.op or None


def _dtype_key(e: FREntry) -> str | None:
    return ",".join(e.input_dtypes) if e.input_dtypes else None


def _size_key(e: FREntry) -> str | None:
    if e.op not in SIZE_MUST_AGREE:
        return "exempt"
    return f"in={list(map(list, e.input_sizes))} out={list(map(list, e.output_sizes))}"


def _hang_findings(blocks: list[Block], initiating: set[int], members_of: dict[str, dict[int, Member]]) -> list[FRFinding]:
    """One finding per group whose blocked ranks wait for an initiating rank, best supported first."""
    by_group: dict[tuple[str, tuple[int, ...]], list[Block]] = defaultdict(list)
    for block in blocks:
        if initiating & block.blamed.keys():
            by_group[(block.info.name, block.info.ranks)].append(block)
    findings: list[tuple[tuple[int, int, int, str], FRFinding]] = []
    for group in by_group.values():
        info, members = group[0].info, members_of[group[0].info.name + repr(group[0].info.ranks)]
        first = min(group, key=lambda b: (b.entry.is_p2p, b.entry.seq_id, b.entry.time_created_ns or 0)).entry
        states = {q: s for b in group for q, s in b.blamed.items() if q in initiating}
        waiting = {r: (e, sorted(initiating & b.blamed.keys())) for b in group for r, e in b.waiters.items()}
        blamed = sorted(states)
        evidence: list[FREvidence] = []
        for q in blamed:
            m = members.get(q)
            if m is None:
                evidence.append(
                    FREvidence(file="(none)", rank=q, pg_name=info.name, pg_desc=info.desc, state="absent", role="missing-dump")
                )
                continue
            last = m.pending(first.is_p2p)[:1] or m.entries[-1:]
            note = f"last enqueued #{m.enqueued}, last completed #{m.completed}" if not first.is_p2p else "no matching op posted"
            evidence.append(cite(m, info, last[0] if last else None, "initiator", note, seq=m.enqueued))
        for r in sorted(waiting)[: max(0, MAX_EVIDENCE - len(evidence))]:
            entry, whom = waiting[r]
            evidence.append(cite(members[r], info, entry, "waiter", f"waits for rank(s) {whom}"))
        kind: Literal["hang", "missing-dump"] = "missing-dump" if all(s == "no-dump" for s in states.values()) else "hang"
        seq_kind: SeqKind = "p2p" if first.is_p2p else "collective"
        said = ", ".join(f"rank {q} ({states[q]})" for q in blamed)
        reason = (
            f"in {info.desc or info.name} ({len(info.ranks)} ranks) {len(waiting)} rank(s) wait at {first.op} "
            f"#{first.seq_id} ({seq_kind}) for {said}"
        )
        finding = FRFinding(
            kind=kind,
            process_group=pg_ref(info),
            collective=CollectiveRef(op=first.op, seq_id=first.seq_id, seq_kind=seq_kind, profiling_name=first.profiling_name),
            initiating_ranks=blamed,
            waiting_ranks=sorted(waiting),
            initiating_state=states,
            evidence=evidence,
            reason=reason,
        )
        findings.append(((-len(blamed), -len(waiting), first.time_created_ns or 0, info.name), finding))
    return [f for _, f in sorted(findings, key=lambda sf: sf[0])]


def _completed_ref(rank: int, info: PGInfo, m: Member | None) -> CompletedRef:
    base = {"rank": rank, "pg_name": info.name, "pg_desc": info.desc}
    if m is None:
        return CompletedRef.model_validate(base | {"file": None, "seq_id": None, "source": "none"})
    done = [e for e in m.entries if not e.is_p2p and e.completed and e.collective_seq_id == m.completed]
    if done:
        e = done[-1]
        return CompletedRef.model_validate(
            base | {"file": m.dump.file, "seq_id": m.completed, "op": e.op, "record_id": e.record_id, "source": "entry"}
        )
    source = "pg_status" if m.completed is not None else "none"
    return CompletedRef.model_validate(base | {"file": m.dump.file, "seq_id": m.completed, "source": source})


def analyze(dumps: list[RankDump]) -> FRVerdict:
    """The ranks the others wait for (or the odd ones out of a mismatch), with the group, the collective and cited entries.

    ``dumps`` come from ``diagnose.parse.flight_recorder.load_dumps`` (already masked). Pure and offline.
    """
    groups = group_views(dumps)
    world = sorted({r for info, _ in groups.values() for r in info.ranks} | {d.rank for d in dumps})
    have = {d.rank for d in dumps}
    missing = [r for r in world if r not in have]
    base = {"missing_dumps": missing, "world_size": len(world), "files": [d.file for d in dumps]}
    members_of = {info.name + repr(info.ranks): members for info, members in groups.values()}
    ordered = sorted(groups.values(), key=lambda g: (len(g[0].ranks), g[0].name))

    mismatches = [f for f in (_mismatch(info, members) for info, members in ordered) if f is not None]
    if mismatches:
        top = mismatches[0]
        pg, pg_members = groups[(top.process_group.name, tuple(top.process_group.ranks))]
        return FRVerdict.model_validate(
            base
            | {"kind": "mismatch", "initiating_ranks": sorted({r for f in mismatches for r in f.initiating_ranks})}
            | {"root_cause_id": ROOT_CAUSE["mismatch"], "process_group": top.process_group, "collective": top.collective}
            | {"evidence": top.evidence, "reason": top.reason, "findings": mismatches}
            | {"last_completed": {r: _completed_ref(r, pg, pg_members.get(r)) for r in pg.ranks}}
        )

    blocks = [b for info, members in ordered for b in (*collective_blocks(info, members), *p2p_blocks(info, members))]
    initiating = terminal(blocks)
    findings = _hang_findings(blocks, set(initiating), members_of)
    if not findings:
        note = f"; no dump from rank(s) {missing}" if missing else ""
        return FRVerdict.model_validate(base | {"kind": "none", "reason": "no rank waits for another in any process group" + note})
    top = findings[0]
    pg, pg_members = groups[(top.process_group.name, tuple(top.process_group.ranks))]
    kind: VerdictKind = "missing-dump" if all(r in missing for r in initiating) else "hang"
    detail = "; ".join(f.reason for f in findings[:3])
    more = f" (+{len(findings) - 3} more groups)" if len(findings) > 3 else ""
    lead = f"rank(s) {initiating} are the ranks the others wait for" + (
        ": they left no dump, so they most likely died first" if kind == "missing-dump" else ""
    )
    return FRVerdict.model_validate(
        base
        | {"kind": kind, "initiating_ranks": initiating, "root_cause_id": ROOT_CAUSE.get(kind), "process_group": top.process_group}
        | {"collective": top.collective, "evidence": top.evidence, "reason": f"{lead}: {detail}{more}", "findings": findings}
        | {"last_completed": {r: _completed_ref(r, pg, pg_members.get(r)) for r in pg.ranks}}
    )


def stuck_in(dumps: list[RankDump], rank: int) -> StuckAnswer:
    """Which collective(s) rank ``rank`` was stuck in: its first unfinished op in each group, oldest first, cited."""
    return stuck_in_views(dumps, rank, group_views(dumps))


def stuck_in_views(
    dumps: list[RankDump], rank: int, views: dict[tuple[str, tuple[int, ...]], tuple[PGInfo, dict[int, Member]]]
) -> StuckAnswer:
    searched = f"dumps of {_ranks_text([d.rank for d in dumps])}"
    out: list[tuple[int, FREvidence]] = []
    for info, members in views.values():
        m = members.get(rank)
        if m is None:
            continue
        for p2p in (False, True):
            pending = m.pending(p2p)
            if pending:
                out.append((pending[0].time_created_ns or 0, cite(m, info, pending[0], "waiter", "first unfinished op in this group")))
    if not out:
        note = "no dump from this rank" if rank not in {d.rank for d in dumps} else "every recorded op of this rank had completed"
        return StuckAnswer(status="no_data", rank=rank, searched=f"{searched}; {note}")
    return StuckAnswer(status="ok", rank=rank, entries=[ev for _, ev in sorted(out, key=lambda x: x[0])], searched=searched)


def last_completed(dumps: list[RankDump]) -> LastCompletedAnswer:
    """The last collective every rank completed in each of its groups (seq from pg_status; op when still in the buffer)."""
    by_rank: dict[int, list[CompletedRef]] = defaultdict(list)
    for info, members in sorted(group_views(dumps).values(), key=lambda g: (g[0].name, g[0].ranks)):
        for rank, m in members.items():
            by_rank[rank].append(_completed_ref(rank, info, m))
    searched = f"pg_status and entries of the dumps of {_ranks_text([d.rank for d in dumps])}"
    status: Literal["ok", "no_data"] = "ok" if by_rank else "no_data"
    return LastCompletedAnswer(status=status, by_rank={r: by_rank[r] for r in sorted(by_rank)}, searched=searched)


def _ranks_text(ranks: list[int]) -> str:
    """``ranks 0-7, 9, 12-15``: citations stay short at thousands of ranks."""
    return f"ranks {rank_ranges(ranks)}" if ranks else "no ranks"
