"""The waits-for graph of a Flight Recorder run: each group's members, the blocks where ranks wait, and its ends.

Within a group a rank is *blocked* at its lowest unfinished sequence number; it *waits for* every member
that never enqueued that collective, every member whose dump is missing, and, for send/recv, the peer that
never posted the matching op. ``terminal`` names the waited-for ranks that wait for nobody themselves.
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass, field

from diagnose.engine.fr_models import FREvidence, ProcessGroupRef
from diagnose.parse.fr_model import FREntry, PGInfo, RankDump

__all__ = ["Block", "Member", "cite", "collective_blocks", "group_views", "p2p_blocks", "pg_ref", "terminal"]


@dataclass
class Member:
    """One rank's view of one group."""

    dump: RankDump
    entries: list[FREntry] = field(default_factory=list)
    enqueued: int | None = None
    completed: int | None = None
    _pending: dict[bool, list[FREntry]] = field(default_factory=dict)

    def pending(self, p2p: bool) -> list[FREntry]:
        """Unfinished ops of this kind, in order."""
        if p2p not in self._pending:
            done = self.completed if self.completed is not None and not p2p else -1
            ops = [e for e in self.entries if e.is_p2p == p2p and not e.completed and (p2p or e.collective_seq_id > done)]
            self._pending[p2p] = ops
        return self._pending[p2p]


def pg_id_names(dump: RankDump) -> dict[str, str]:
    """Local pg id -> group name: from the entries, else by creation order when names are numeric and counts agree."""
    known = {str(e.pg_id): e.pg_name for e in dump.entries if e.pg_id is not None}
    names, ids = list(dump.pg_config), list(dump.pg_status)
    if len(names) == len(ids) and all(n.isdigit() for n in names) and all(i.lstrip("-").isdigit() for i in ids):
        guess = dict(zip(sorted(ids, key=int), sorted(names, key=int), strict=True))
        if all(guess.get(k) == v for k, v in known.items()):
            return guess
    return known


def group_views(dumps: list[RankDump]) -> dict[tuple[str, tuple[int, ...]], tuple[PGInfo, dict[int, Member]]]:
    """Every group with at least two members, with the view of each member that left a dump."""
    out: dict[tuple[str, tuple[int, ...]], tuple[PGInfo, dict[int, Member]]] = {}
    for dump in dumps:
        status = {name: dump.pg_status[i] for i, name in pg_id_names(dump).items() if i in dump.pg_status}
        by_pg: dict[str, list[FREntry]] = defaultdict(list)
        for e in dump.entries:
            by_pg[e.pg_name].append(e)
        for name, info in dump.pg_config.items():
            if len(info.ranks) < 2:
                continue
            group = out.setdefault((name, info.ranks), (info, {}))
            entries = by_pg.get(name, [])
            st = status.get(name)
            coll = [e.collective_seq_id for e in entries if not e.is_p2p]
            done = [e.collective_seq_id for e in entries if not e.is_p2p and e.completed]
            enq = max([x for x in [st.last_enqueued if st else None, *coll] if x is not None], default=None)
            comp = max([x for x in [st.last_completed if st else None, *done] if x is not None], default=None)
            group[1][dump.rank] = Member(dump, entries, enq, comp)
    return out


def pg_ref(info: PGInfo) -> ProcessGroupRef:
    """The group as the results name it."""
    return ProcessGroupRef(name=info.name, desc=info.desc, ranks=list(info.ranks))


def cite(m: Member, info: PGInfo, e: FREntry | None, role: str, note: str = "", seq: int | None = None) -> FREvidence:
    """A dump entry (or, with ``e=None``, the member's pg_status) as cited evidence."""
    if e is None:
        return FREvidence.model_validate(
            {"file": m.dump.file, "rank": m.dump.rank, "pg_name": info.name, "pg_desc": info.desc, "seq_id": seq}
            | {"state": "pg_status" if m.enqueued is not None else "absent", "role": role, "note": note}
        )
    return FREvidence.model_validate(
        {"file": m.dump.file, "rank": m.dump.rank, "pg_name": info.name, "pg_desc": info.desc, "record_id": e.record_id}
        | {"seq_id": e.seq_id, "seq_kind": "p2p" if e.is_p2p else "collective", "op": e.op, "state": e.state, "role": role, "note": note}
    )


@dataclass
class Block:
    """Ranks of one group blocked at the same op (``waiters``: rank -> its entry) and the ranks they wait for."""

    info: PGInfo
    entry: FREntry
    waiters: dict[int, FREntry]
    blamed: dict[int, str]
    """rank -> never-entered | stuck-earlier | no-dump"""


def collective_blocks(info: PGInfo, members: dict[int, Member]) -> list[Block]:
    """Waiters grouped by the collective they are blocked at, with the members that never enqueued it."""
    by_seq: dict[int, dict[int, FREntry]] = defaultdict(dict)
    for rank, m in members.items():
        pending = m.pending(p2p=False)
        if pending:
            by_seq[pending[0].collective_seq_id][rank] = pending[0]
    blocks: list[Block] = []
    for seq, waiters in sorted(by_seq.items()):
        blamed: dict[int, str] = {}
        for q in info.ranks:
            other = members.get(q)
            if other is None:
                blamed[q] = "no-dump"
            elif q not in waiters and (other.enqueued is None or other.enqueued < seq):
                blamed[q] = "stuck-earlier" if other.pending(False) else "never-entered"
        if blamed:
            first = min(waiters.values(), key=lambda e: e.time_created_ns or 0)
            blocks.append(Block(info, first, waiters, blamed))
    return blocks


def p2p_blocks(info: PGInfo, members: dict[int, Member]) -> list[Block]:
    """Ranks blocked at a send/recv whose peer never posted the matching op (or left no dump)."""
    blocks: list[Block] = []
    for rank, m in members.items():
        pending = m.pending(p2p=True)
        peers = pending[0].peers if pending else None
        if peers is None:
            continue
        e, (src, dst) = pending[0], peers
        local = dst if e.op == "send" else src
        if not 0 <= local < len(info.ranks) or info.ranks[local] == rank:
            continue
        q, want = info.ranks[local], ("recv" if e.op == "send" else "send")
        other = members.get(q)
        if other is None:
            blocks.append(Block(info, e, {rank: e}, {q: "no-dump"}))
        elif not any(o.op == want and o.peers == (src, dst) for o in other.pending(p2p=True)):
            blocks.append(Block(info, e, {rank: e}, {q: "never-entered"}))
    return blocks


def terminal(blocks: list[Block]) -> list[int]:
    """Blamed ranks in the terminal strongly connected parts of the waits-for graph: waited for, waiting for no one else.

    Nodes are ranks (>= 0) and blocks (< 0): rank -> block it is blocked in -> ranks that block waits for. A plain
    chain ends at a rank with no way out; a cycle (collectives issued in a different order) names all its ranks.
    """
    edges: dict[int, list[int]] = defaultdict(list)
    for i, block in enumerate(blocks):
        node = -(i + 1)
        for rank in block.waiters:
            edges[rank].append(node)
        edges[node].extend(block.blamed)
    blamed = {q for block in blocks for q in block.blamed}
    nodes = list(dict.fromkeys([*edges, *blamed]))
    comp = _components(nodes, edges)
    exits = {comp[n] for n in nodes for v in edges.get(n, ()) if comp[v] != comp[n]}
    return sorted(q for q in blamed if comp[q] not in exits)


def _components(nodes: list[int], edges: dict[int, list[int]]) -> dict[int, int]:
    """Strongly connected component id of every node (iterative Tarjan)."""
    index: dict[int, int] = {}
    low: dict[int, int] = {}
    comp: dict[int, int] = {}
    stack: list[int] = []
    on_stack: set[int] = set()
    for root in nodes:
        if root in index:
            continue
        work = [(root, 0)]
        while work:
            node, i = work.pop()
            if i == 0:
                index[node] = low[node] = len(index)
                stack.append(node)
                on_stack.add(node)
            succ = edges.get(node, [])
            if i < len(succ):
                work.append((node, i + 1))
                nxt = succ[i]
                if nxt not in index:
                    work.append((nxt, 0))
                elif nxt in on_stack:
                    low[node] = min(low[node], index[nxt])
                continue
            if low[node] == index[node]:
                while True:
                    top = stack.pop()
                    on_stack.discard(top)
                    comp[top] = node
                    if top == node:
                        break
            if work:
                parent = work[-1][0]
                low[parent] = min(low[parent], low[node])
    return comp
