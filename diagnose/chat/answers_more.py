"""Offline answers that weigh options: would a setting help, how to confirm, what else it could be, lines around X."""

from __future__ import annotations

import re

from diagnose.chat.answers_run import first_failure
from diagnose.chat.facts import (
    ENV_RE,
    OPS,
    entry_of,
    error_of,
    evidence_lines,
    host_of,
    kb_cite,
    log_cite,
    mentioned_ranks,
    pick_sentences,
    quote,
    rank_lines,
    search_log,
    searched,
    sentences,
)
from diagnose.chat.session import Answer, ChatSession, Citation
from diagnose.encyclopedia.entries import Entry

_RELATED = re.compile(r"\[([a-z0-9-]+)\]\([^)]*\)\s*(?:[—-]+|:)\s*(.+)")


KNOWN_SETTINGS = re.compile(
    r"(?i)(/dev/shm)|\b(num_workers|shm[-_]size|shared memory|expandable_segments|find_unused_parameters|static_graph|"
    r"gradient checkpointing|activation checkpointing|learning rate|warmup|bf16|fp16|loss scale|ulimit -l|grad(?:ient)? clipping|"
    r"max_split_size_mb|pin_memory|offline mode)\b"
)


def _setting_kind(question: str) -> tuple[str, str]:
    """(kind, the setting as the user named it): nccl (an NCCL_ variable), timeout, batch, or other (any other setting)."""
    env = ENV_RE.search(question)
    if env and env.group(1).startswith("NCCL_") and "TIMEOUT" not in env.group(1):
        return "nccl", env.group(0)
    if env:
        return "other", env.group(1)
    if re.search(r"\btime ?out\b", question, re.I):
        return "timeout", "a longer timeout"
    if re.search(r"\bbatch\b", question, re.I):
        return "batch", "a smaller batch"
    known = KNOWN_SETTINGS.search(question)
    if known:
        return "other", known.group(known.lastindex or 0)
    named = re.search(
        r"(?i)\b(?:would|will|does|do|could|might)\s+(?:it\s+)?(?:a |an |the |setting |using |adding )*(.+?)\s+help\b", question
    )
    return "other", (named.group(1).strip() if named else "that setting")


def _verdict(session: ChatSession, kind: str, name: str, entry: Entry | None, failed: str) -> str:
    """The first sentence of a setting answer: yes, maybe or probably not, for this root cause."""
    d = session.diagnosis
    rid, rank = d.root_cause.id, d.initiating_rank
    helps = set(entry.helped_by) if entry is not None else set()
    who = f"Rank {rank}" if rank is not None else "The failing process"
    if kind == "timeout":
        if "longer-timeout" in helps:
            return f"Maybe, for a while: {rid} means a rank is slow but still progressing ({failed}); the fix is what slows it."
        return f"Probably not: a longer timeout only makes the other ranks wait longer. {who} did not just run slow, it failed ({failed})."
    if kind == "batch":
        if "smaller-batch" in helps:
            return f"Yes, likely: this is {d.root_cause.title}, and a smaller batch lowers the memory each step needs ({failed})."
        if rid == "host-oom-killed":
            return (
                f"Probably not by itself: the host's RAM ran out ({failed}); what each process and its DataLoader "
                "workers hold in host memory matters more than the batch."
            )
        return f"Probably not: this is {d.root_cause.title}, not GPU memory running out ({failed}); a smaller batch does not change it."
    if kind == "nccl":
        if "nccl-settings" in helps:
            return f"Maybe: {name} changes how NCCL connects, which is where this failure is ({failed})."
        return (
            f"Probably not: {name} changes how NCCL moves data, but this is {d.root_cause.title} ({failed}); "
            "NCCL's errors here, if any, are consequences."
        )
    in_fix = entry is not None and bool(pick_sentences(entry, ("Fix", "Prevention"), (name,), 1))
    if in_fix:
        return f"Yes, likely: the encyclopedia's fix for {d.root_cause.title} includes {name} ({failed})."
    return f"The log and the encyclopedia do not say that {name} helps with {d.root_cause.title} ({failed})."


def setting(session: ChatSession, question: str) -> Answer:
    """Would a setting help: a verdict for this cause, whether the log shows it set, and what the entry says of it."""
    d = session.diagnosis
    entry = entry_of(d)
    kind, name = _setting_kind(question)
    first = first_failure(d)
    cites: list[Citation] = [log_cite(first)] if first else []
    failed = f"{first.file}:{first.line}: `{error_of(first)}`" if first else "the first failing line"
    parts = [_verdict(session, kind, name, entry, failed)]
    term = name.split("=")[0] if kind in ("nccl", "other") else ("timeout" if kind == "timeout" else "batch")
    seen = search_log(session.log, [re.compile(re.escape(term), re.I)], 2)
    if seen:
        parts.append(f"The log mentions {term}: {quote(seen[0])}")
        cites += [log_cite(x) for x in seen[:1]]
    elif kind in ("nccl", "other"):
        parts.append(f"The log does not show {term} set ({searched(session.log)}).")
    if entry is not None:
        sections = ("Fix", "Prevention") if kind in ("timeout", "batch") else ("Fix", "Prevention", "How to confirm", "Why it happens")
        picked = pick_sentences(entry, sections, (term,), 2)
        parts += [f"From the encyclopedia ({entry.id} / {section}): {s}" for section, s in picked]
        cites += [kb_cite(entry, section, s) for section, s in picked]
        if not picked and entry.fix:
            fix = sentences(entry.section("Fix"))[:1]
            parts += [f"What does help ({entry.id} / Fix): {s}" for s in fix]
            cites += [kb_cite(entry, "Fix", s) for s in fix]
    return Answer(answer="\n".join(parts), citations=cites)


def confirm(session: ChatSession, question: str) -> Answer:
    """How to confirm or reproduce it: where (rank, host), the entry's checks, the commands, and the line to look for."""
    d = session.diagnosis
    entry = entry_of(d)
    first = first_failure(d)
    if entry is None:
        return Answer(
            answer=(
                "The log does not say what failed, so there is nothing specific to confirm. What would "
                "answer it: the full log of the first failing rank with `NCCL_DEBUG=INFO`."
            ),
            grounded=False,
        )
    host = host_of(session, d.initiating_rank)
    where = " on ".join(x for x in (f"rank {d.initiating_rank}" if d.initiating_rank is not None else "", host or "") if x)
    parts = [f"To confirm {entry.title}" + (f" ({where})" if where else "") + ":"]
    checks = [s for _, s in pick_sentences(entry, ("How to confirm",), ("",), 3)]
    parts += [f"- {s}" for s in checks]
    cites: list[Citation] = [kb_cite(entry, "How to confirm", " ".join(checks))] if checks else []
    if d.verify:
        parts.append("Commands:\n" + "\n".join(f"$ {c}" for c in d.verify[:4]))
        cites.append(kb_cite(entry, "Verify"))
    if first is not None:
        parts.append("In this log, the lines that show it (look for them again after the check):")
        parts += [f"    {quote(e)}" for e in evidence_lines(d, 2)]
        cites += [log_cite(e) for e in evidence_lines(d, 2)]
    return Answer(answer="\n".join(parts), citations=cites)


def _related_reasons(entry: Entry) -> dict[str, str]:
    reasons: dict[str, str] = {}
    for line in entry.section("Related").splitlines():
        match = _RELATED.search(line)
        if match:
            reasons[match.group(1)] = match.group(2).strip()
    return reasons


def _root_first_order(session: ChatSession) -> int | None:
    orders = [f.order for f in session.log.findings if f.entry_id == session.diagnosis.root_cause.id and f.role == "initiating"]
    return min(orders) if orders else None


def _weigh(session: ChatSession, other: str, reason: str | None) -> tuple[str, list[Citation]]:
    """One alternative: the evidence for it and against it in this log."""
    d = session.diagnosis
    found = sorted((f for f in session.log.findings if f.entry_id == other), key=lambda f: f.order)
    head = f"- {other}" + (f" ({reason})" if reason else "")
    if not found:
        return f"{head}\n  For: nothing in this log. Against: no line matches its signatures ({searched(session.log)}).", []
    line = found[0].evidence
    roles = {f.role for f in found}
    root_order = _root_first_order(session)
    if roles <= {"cascade", "teardown", "noise"}:
        kinds = "/".join(sorted(roles))
        against = f"those lines are {kinds} (a consequence of the root cause or noise), not a failure of their own"
    elif root_order is not None and found[0].order > root_order:
        against = f"its first line comes after the first {d.root_cause.id} line, so it followed the root cause"
    else:
        against = f"its signatures are weaker or rarer here than those of {d.root_cause.id}, which ranked first"
    return f"{head}\n  For: {len(found)} line(s) match it, first {quote(line)}\n  Against: {against}.", [log_cite(line)]


def alternatives(session: ChatSession, question: str) -> Answer:
    """Each alternative with the evidence for and against it from this log."""
    d = session.diagnosis
    entry = entry_of(d)
    if entry is None:
        return Answer(
            answer=(
                "The log does not say what failed, so there are no alternatives to weigh. What would "
                "answer it: the full traceback of the first failing rank."
            ),
            grounded=False,
        )
    first = first_failure(d)
    parts = [f"The root cause is {d.root_cause.id}" + (f", from {first.file}:{first.line}: `{error_of(first)}`." if first else ".")]
    cites: list[Citation] = [log_cite(first)] if first else []
    reasons = _related_reasons(entry)
    others = [c.id for c in d.candidates if c.id != d.root_cause.id]
    others += [r for r in entry.related if r not in others]
    parts.append("Other explanations, each with the evidence for and against it in this log:")
    for other in others[:7]:
        text, more = _weigh(session, other, reasons.get(other))
        parts.append(text)
        cites += more
    cites.append(kb_cite(entry, "Related"))
    return Answer(answer="\n".join(parts), citations=cites)


def _source_for(session: ChatSession, question: str) -> str:
    log, d = session.log, session.diagnosis
    for source in log.sources:
        if source in question or source.rsplit("/", 1)[-1] in question.split():
            return source
    return d.evidence[0].file if d.evidence else (log.sources or [""])[0]


def _anchor(session: ChatSession, question: str) -> tuple[str, int] | None:
    """The line a question points at: a line number, a rank's failing line, or the first line naming what it asks."""
    number = re.search(r"\bline\s*(\d+)", question, re.I)
    if number:
        return _source_for(session, question), int(number.group(1))
    ranks = mentioned_ranks(question)
    if ranks:
        lines = rank_lines(session, ranks[0], 1)
        if lines:
            return lines[0].source, lines[0].line
    target = re.sub(r"(?i).*\b(?:around|near|before|after)\s+(?:the\s+)?(?:first\s+)?", "", question).strip(" ?.!")
    words = [w for w in re.findall(r"[A-Za-z_<>][\w<>-]{2,}", target) if w.lower() not in {"error", "line", "lines", "the"}]
    patterns = [re.compile(re.escape(w), re.I) for w in words[:3]]
    if "timeout" in target.lower():
        patterns.insert(0, re.compile(r"(?i)watchdog|timed? ?out"))
    if "error" in target.lower() and session.diagnosis.evidence:
        e = session.diagnosis.evidence[0]
        return e.file, e.line
    hits = search_log(session.log, patterns[:1], 1) if patterns else []
    return (hits[0].source, hits[0].line) if hits else None


def lines_around(session: ChatSession, question: str) -> Answer:
    """The log's lines around a line number, a rank's failing line, or the first line naming what was asked."""
    log = session.log
    anchor = _anchor(session, question)
    if anchor is None:
        return Answer(
            answer=(
                f"The log does not have a line matching that ({searched(log)}). What would answer it: "
                "a line number, a rank, or a word from the line you mean."
            ),
            grounded=False,
        )
    source, number = anchor
    cites = [
        Citation(kind="log", file=source, line=n, text=text)
        for n in range(max(1, number - 5), number + 6)
        if (text := log.line_text(source, n)) is not None
    ]
    if not cites:
        return Answer(
            answer=(
                f"The log does not have line {number} of {source} ({searched(log)}). What would answer it: a line number within the log."
            ),
            grounded=False,
        )
    body = "\n".join(f"{'*' if c.line == number else ' '}{c.line:>6}  {c.text}" for c in cites)
    return Answer(answer=f"{source}, lines {cites[0].line}-{cites[-1].line}:\n{body}", citations=cites)


def mentions(session: ChatSession, question: str) -> list[re.Pattern[str]]:
    """Patterns for what a question names that a log line could hold: hosts, env vars, ops, quoted text."""
    found: list[re.Pattern[str]] = [re.compile(re.escape(h)) for h in re.findall(r"<[A-Z]+_\d+>", question)]
    found += [re.compile(re.escape(m.group(1))) for m in ENV_RE.finditer(question)]
    found += [re.compile(op, re.I) for op in OPS if re.search(rf"\b{op}\b", question, re.I)]
    found += [re.compile(re.escape(q), re.I) for q in re.findall(r"[`'\"]([^`'\"]{4,})[`'\"]", question)]
    found += [re.compile(rf"\b{re.escape(w)}\b") for w in re.findall(r"\b[A-Z][a-z]+(?:Error|Exception)\b", question)]
    return found
