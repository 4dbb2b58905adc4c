"""Offline answers from the run's Flight Recorder dumps: which collective a rank was stuck in, what every rank completed last.

The answers come from ``ChatSession.flight_recorder`` (``stuck_in`` and ``last_completed`` of
``diagnose.engine.flight_recorder``, computed when the run was diagnosed) and cite the dump entries
(``Citation(kind="dump")``: the masked dump file and the entry's record_id). Without dumps they say so,
with the log's own lines for the rank when it has some, and what would answer it next time.
"""

from __future__ import annotations

import re
from collections import defaultdict

from diagnose.chat.facts import log_cite, mentioned_ranks, quote, rank_lines
from diagnose.chat.session import Answer, ChatSession, Citation
from diagnose.engine.fr_models import CompletedRef, FREvidence, FRFacts
from diagnose.rank_ranges import rank_ranges

__all__ = ["LAST_COMPLETED", "STUCK", "last_completed", "stuck"]

STUCK = re.compile(
    r"\bwhich (?:collective|op|operation|nccl op)s?\b|\b(?:stuck|hung|hanging|blocked|waiting) (?:in|at|on) (?:which|what|a|the) "
    r"(?:collective|op|operation)|\b(?:where|what) (?:was|is|were|did) ranks? \d+ (?:stuck|hang|hung|blocked|waiting)",
    re.I,
)
LAST_COMPLETED = re.compile(
    r"\blast (?:thing|collective|op|operation|step)s?\b.*\b(?:complet|finish|done|succe)|\b(?:complet|finish)\w* last\b|"
    r"\bwhat did (?:every|each|all)(?: the)? ranks? (?:complete|finish)",
    re.I,
)
MAX_RANKS = 4
MAX_GROUPS = 8
NO_DUMPS_HINT = (
    "Flight Recorder dumps: `TORCH_NCCL_TRACE_BUFFER_SIZE=2000` and `TORCH_NCCL_DUMP_ON_TIMEOUT=1` in the next run, "
    "then `diagnose log` on the folder of dumps (with the logs beside them)"
)


def _cite(ev: FREvidence, text: str) -> Citation:
    return Citation(kind="dump", file=ev.file, rank=ev.rank, record_id=ev.record_id, text=text)


def _where(ev: FREvidence) -> str:
    entry = f"record {ev.record_id} of {ev.file}" if ev.record_id is not None else f"pg_status of {ev.file}"
    what = f"{ev.op} #{ev.seq_id} ({ev.seq_kind})" if ev.op else f"last enqueued #{ev.seq_id}"
    return f"{what} in process group {ev.pg_desc or ev.pg_name}, state {ev.state} ({entry})"


def _role(facts: FRFacts, rank: int) -> str:
    """What the verdict says about the rank: one the others wait for, or one that waits."""
    for finding in facts.verdict.findings:
        coll = finding.collective
        at = f" at {coll.op} #{coll.seq_id}" if coll else ""
        group = finding.process_group.desc or finding.process_group.name
        if rank in finding.initiating_ranks and finding.waiting_ranks:
            state = finding.initiating_state.get(rank, "").replace("-", " ")
            return (
                f" The dumps name it as a rank the others wait for ({state}): ranks {rank_ranges(finding.waiting_ranks)} wait for it{at}"
                f" in {group}."
            )
        if rank in finding.waiting_ranks:
            return f" It waits for rank(s) {rank_ranges(finding.initiating_ranks)}{at} in {group}: collateral, not the cause."
    return ""


def _without_dumps(session: ChatSession, ranks: list[int], what: str) -> Answer:
    for rank in ranks[:1]:
        found = [line for line in rank_lines(session, rank, 15) if re.search(r"SeqNum|OpType|collective|Watchdog", line.text)]
        if found:
            return Answer(
                answer=f"No Flight Recorder dumps came with this log; rank {rank}'s own lines about collectives:\n"
                + "\n".join(quote(line) for line in found[:5]),
                citations=[log_cite(line) for line in found[:5]],
            )
    return Answer(
        answer=f"The log cannot say {what}: no Flight Recorder dumps came with it. What would answer it: {NO_DUMPS_HINT}.", grounded=False
    )


def stuck(session: ChatSession, question: str) -> Answer:
    """Which collective(s) a rank was stuck in: its first unfinished op in each group, from its dump (oldest first)."""
    facts = session.flight_recorder
    ranks = mentioned_ranks(question) or list(session.diagnosis.initiating_ranks)
    if facts is None:
        return _without_dumps(session, ranks, "which collective a rank was stuck in")
    if not ranks:
        ranks = facts.verdict.initiating_ranks
    parts: list[str] = []
    citations: list[Citation] = []
    for rank in ranks[:MAX_RANKS]:
        answer = facts.stuck.get(rank)
        if answer is None or answer.status == "no_data" or not answer.entries:
            searched = answer.searched if answer is not None else f"no dump from rank {rank} ({len(facts.stuck)} dumps)"
            parts.append(f"Rank {rank}: the dumps show no unfinished op ({searched})." + _role(facts, rank))
            cited = [ev for f in facts.verdict.findings for ev in f.evidence if ev.rank == rank]
            citations += [_cite(ev, f"{_where(ev)}; {ev.note}" if ev.note else _where(ev)) for ev in cited[:2]]
            continue
        first, more = answer.entries[0], answer.entries[1:]
        text = f"Rank {rank} was stuck in {_where(first)}."
        if more:
            text += (
                f" It also had unfinished ops in {len(more)} other group(s): "
                + "; ".join(f"{ev.op} #{ev.seq_id} in {ev.pg_desc or ev.pg_name}" for ev in more[:4])
                + ("; …" if len(more) > 4 else ".")
            )
        parts.append(text + _role(facts, rank))
        citations += [_cite(ev, _where(ev)) for ev in answer.entries[:3]]
    if len(ranks) > MAX_RANKS:
        parts.append(f"(+{len(ranks) - MAX_RANKS} more ranks asked about; ask for them one at a time)")
    return Answer(answer="\n".join(parts), citations=citations)


def last_completed(session: ChatSession, question: str) -> Answer:
    """The last collective every rank completed, per process group, ranks that agree grouped; the ranks behind named."""
    facts = session.flight_recorder
    if facts is None:
        return _without_dumps(session, mentioned_ranks(question), "what every rank completed last")
    asked = set(mentioned_ranks(question))
    groups: dict[tuple[str, str], dict[tuple[int | None, str | None], list[CompletedRef]]] = defaultdict(lambda: defaultdict(list))
    for rank, refs in facts.last_completed.by_rank.items():
        if asked and rank not in asked:
            continue
        for ref in refs:
            groups[(ref.pg_name, ref.pg_desc)][(ref.seq_id, ref.op)].append(ref)
    if not groups:
        return Answer(answer=f"The dumps record no completed collective for those ranks ({facts.last_completed.searched}).", grounded=False)
    behind: dict[int, int] = defaultdict(int)
    lines: list[tuple[bool, str]] = []
    citations: list[Citation] = []
    for (name, desc), by_seq in groups.items():
        top = max((seq for seq, _ in by_seq if seq is not None), default=None)
        shown = []
        for (seq, op), refs in sorted(by_seq.items(), key=lambda item: -(item[0][0] if item[0][0] is not None else -1)):
            ranks = sorted(ref.rank for ref in refs)
            if top is not None and (seq is None or seq < top):
                for r in ranks:
                    behind[r] += 1
            what = (f"#{seq} {op}" if op else f"#{seq}") if seq is not None else "nothing completed"
            shown.append(f"{what} on rank{'s' if len(ranks) > 1 else ''} {rank_ranges(ranks)}")
            example = next((ref for ref in refs if ref.file), None)
            if example is not None and len(citations) < MAX_GROUPS:
                entry = f"record {example.record_id}" if example.record_id is not None else "pg_status"
                citations.append(
                    Citation(
                        kind="dump",
                        file=example.file,
                        rank=example.rank,
                        record_id=example.record_id,
                        text=f"{desc or name}: last completed #{seq} {op or ''} ({entry})".strip(),
                    )
                )
        label = f"{desc} (group {name})" if desc and sum(d == desc for _, d in groups) > 1 else desc or name
        lines.append((len(by_seq) > 1, f"- {label}: " + "; ".join(shown)))
    lines.sort(key=lambda item: not item[0])  # groups where ranks disagree first
    out = [
        f"The last collective each rank completed, per process group, by sequence number; the op where the ring buffer still holds it "
        f"({facts.last_completed.searched}):"
    ]
    out += [text for _, text in lines[:MAX_GROUPS]]
    if len(lines) > MAX_GROUPS:
        out.append(f"(+{len(lines) - MAX_GROUPS} more groups where every rank completed the same collective)")
    if behind:
        out.append("Behind the others: " + ", ".join(f"rank {r} (in {n} group{'s' if n > 1 else ''})" for r, n in sorted(behind.items())))
    return Answer(answer="\n".join(out), citations=citations)
