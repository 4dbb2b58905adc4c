"""Offline answers about the run itself: which rank, which node, hardware or code, why so late, resume or not."""

from __future__ import annotations

from diagnose.chat.facts import (
    entry_of,
    error_of,
    evidence_lines,
    first_sentences,
    host_of,
    kb_cite,
    log_cite,
    mentioned_ranks,
    pick_sentences,
    quote,
    rank_lines,
)
from diagnose.chat.session import Answer, ChatSession, Citation
from diagnose.encyclopedia.entries import Entry
from diagnose.schema import Diagnosis, Evidence

NO_RANK_HINT = (
    "rank prefixes on every line (`torchrun --tee 3`, or `--log-dir` for one file per rank) and "
    "`TORCH_NCCL_DUMP_ON_TIMEOUT=1`, so the first failing rank is visible"
)
NO_HOST_HINT = (
    "the host of each rank, printed at start-up (`srun -l hostname`, or torchrun's `--log-dir` per node) "
    "or the scheduler's node list for the job"
)


VERDICTS = {
    "machine": "Verdict: hardware or the machine (the node, its GPU, network or scheduler), not your training code.",
    "environment": (
        "Verdict: the environment (installation, drivers, network or container settings), not a broken GPU and not your model code."
    ),
    "code": "Verdict: your code, data or configuration, not the hardware.",
    "person": "Verdict: neither: a person (or a tool acting for one) stopped the run, and nothing failed before it.",
}
"""One sentence per ``fault`` an entry declares in its front matter."""


def verdict(entry: Entry) -> str:
    """Machine, environment, code or a person's stop, in one sentence, from the entry's ``fault``."""
    return VERDICTS[entry.fault]


def first_failure(d: Diagnosis) -> Evidence | None:
    """The initiating rank's first evidence line (else the first evidence line)."""
    lines = evidence_lines(d, 1)
    return lines[0] if lines else None


def _where(session: ChatSession, rank: int) -> str:
    host = host_of(session, rank)
    return f"rank {rank} on {host}" if host else f"rank {rank}"


def _on_host(session: ChatSession, rank: int) -> str:
    host = host_of(session, rank)
    return f" (on {host})" if host else ""


def why_rank(session: ChatSession, question: str) -> Answer:
    """Which rank started it and why: its failing line quoted, the others' errors as collateral."""
    d = session.diagnosis
    first = first_failure(d)
    cites: list[Citation] = [log_cite(e) for e in evidence_lines(d, 3)]
    if d.initiating_rank is None:
        parts = ["The log does not say which rank started the failure: no line ties the first error to a rank."]
        if first:
            parts.append(f"The first failing line is {quote(first)}")
        parts.append(f"What would answer it: {NO_RANK_HINT}.")
        return Answer(answer="\n".join(parts), citations=cites)
    rank = d.initiating_rank
    together = _all_ranks_failed(session)
    if together is not None and not d.hang_reasoning:
        parts = [
            f"Every rank that logged ({together}) hit the same {d.root_cause.id} error, so the log does not say which "
            f"rank started it: they fail together, and none is a consequence of another. Rank {rank} printed it first:"
        ]
        parts += [f"    {quote(e)}" for e in evidence_lines(d, 2)]
        return Answer(answer="\n".join(parts), citations=cites)
    where = _on_host(session, rank)
    if d.hang_reasoning:
        parts = [f"Rank {rank}{where} is the one the others were waiting for: {d.hang_reasoning}."]
    elif first is not None:
        parts = [f"Rank {rank} is where the failure started{where}: at {first.file}:{first.line} it reported `{error_of(first)}`."]
    else:
        parts = [f"Rank {rank}{where} is where the failure started."]
    parts += [f"    {quote(e)}" for e in evidence_lines(d, 3)]
    if d.collateral:
        parts.append("The other ranks' errors come later and are consequences:")
        parts += [f"- {c.summary} (ranks {ranks_text(c.ranks)})" for c in d.collateral]
    for other in [r for r in mentioned_ranks(question) if r != rank]:
        groups = [c.summary for c in d.collateral if other in c.ranks]
        lines = rank_lines(session, other, 1)
        role = "; ".join(groups) or "no failure of its own"
        parts.append(f"Rank {other} shows only collateral: {role}." + (f" Its first such line: {quote(lines[0])}" if lines else ""))
        cites += [log_cite(x) for x in lines]
    return Answer(answer="\n".join(parts), citations=cites)


def _all_ranks_failed(session: ChatSession) -> str | None:
    """'8 of 8 ranks' when the root cause's own failing lines come from every rank the log shows (3 or more)."""
    d, log = session.diagnosis, session.log
    ranks = {f.rank for f in log.findings if f.entry_id == d.root_cause.id and f.role == "initiating" and f.rank is not None}
    if len(log.ranks) >= 3 and ranks >= set(log.ranks):
        return f"{len(ranks)} of {len(log.ranks)} ranks"
    return None


def ranks_text(ranks: list[int]) -> str:
    """Ranks as a short list (the first 12)."""
    return ", ".join(str(r) for r in ranks[:12]) + (" ..." if len(ranks) > 12 else "") if ranks else "none named"


def explain(session: ChatSession, question: str) -> Answer:
    """What failed and why: the log lines behind it and the entry's explanation, without a verdict."""
    answer = hardware_or_code(session, question)
    text = answer.answer.split("\n", 1)[1] if answer.answer.startswith("Verdict:") else answer.answer
    return answer.model_copy(update={"answer": text})


def hardware_or_code(session: ChatSession, question: str) -> Answer:
    """The verdict, the log line behind it, and why (whole sentences of the entry)."""
    d = session.diagnosis
    entry = entry_of(d)
    if entry is None:
        return Answer(
            answer=(
                "The log does not say whether this is hardware or code: no known failure matched it. "
                "What would answer it: the full traceback of the first failing rank, and the node's kernel "
                "log (`dmesg -T`) for GPU or memory errors."
            ),
            grounded=False,
        )
    parts = [verdict(entry), f"The log shows {entry.title}."]
    cites: list[Citation] = []
    first = first_failure(d)
    if first is not None:
        where = f" (where the failure started: {_where(session, d.initiating_rank)})" if d.initiating_rank is not None else ""
        parts.append(f"The lines that show it{where}:")
        parts += [f"    {quote(e)}" for e in evidence_lines(d, 2)]
        cites += [log_cite(e) for e in evidence_lines(d, 2)]
    for name in ("What it is", "Why it happens"):
        why = first_sentences(entry.section(name), 300)
        if why:
            parts.append(why)
            cites.append(kb_cite(entry, name, why))
    check = pick_sentences(entry, ("How to confirm",), ("",), 1)
    if check:
        parts.append(f"To be sure: {check[0][1]}")
        cites.append(kb_cite(entry, "How to confirm", check[0][1]))
    return Answer(answer="\n".join(parts), citations=cites)


def fix_sentences(entry: Entry, limit: int = 3) -> list[str]:
    """The first whole sentences of an entry's Fix list."""
    return [s for _, s in pick_sentences(entry, ("Fix",), ("",), limit)]
