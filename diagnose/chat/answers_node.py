"""Offline answers about nodes: which one to drain, and what a named host (a placeholder) did."""

from __future__ import annotations

import re

from diagnose.chat.answers_run import NO_HOST_HINT, NO_RANK_HINT, first_failure, ranks_text, verdict
from diagnose.chat.facts import (
    HOST_RE,
    entry_of,
    error_of,
    host_in_lines,
    host_of,
    kb_cite,
    log_cite,
    pick_sentences,
    quote,
    search_log,
    searched,
)
from diagnose.chat.session import Answer, ChatSession, Citation


def which_node(session: ChatSession, question: str) -> Answer:
    """The node to drain (or not): the initiating rank's host, and whether draining helps for this cause."""
    d = session.diagnosis
    entry = entry_of(d)
    first = first_failure(d)
    cites: list[Citation] = [log_cite(first)] if first else []
    if entry is not None and entry.fault == "person":
        where = f" ({first.file}:{first.line})" if first else ""
        text = f"No node needs draining: nothing failed; a person stopped the run{where}. {verdict(entry)}"
        return Answer(answer=text, citations=cites, grounded=bool(cites))
    if d.initiating_rank is None:
        text = (
            "The log does not say which rank or node started the failure, so it does not say which node to drain. "
            f"What would answer it: {NO_RANK_HINT}."
        )
        return Answer(answer=text, citations=cites, grounded=bool(cites))
    rank, host = d.initiating_rank, host_of(session, d.initiating_rank)
    if host is None and (named := host_in_lines(session, rank)) is not None:
        host = named[0]
        cites.append(log_cite(named[1]))
    failed = f" ({first.file}:{first.line}: `{error_of(first)}`)" if first else ""
    if host is None:
        parts = [f"Rank {rank} started the failure{failed}, but the log does not name its host."]
        if entry is not None and entry.drains_node:
            parts.append(f"What would answer it: {NO_HOST_HINT}; then drain the node that ran rank {rank}.")
        else:
            parts += [
                f"Draining that node is not indicated anyway: {d.root_cause.title} is not a fault of the node, and the "
                "job would fail the same way elsewhere.",
                *([verdict(entry)] if entry is not None else []),
            ]
    elif entry is not None and entry.drains_node:
        parts = [f"Drain {host}: it ran rank {rank}, where the failure started{failed}."]
    else:
        parts = [
            f"Rank {rank} ran on {host}{failed}, but draining {host} is not indicated: "
            f"{d.root_cause.title} is not a fault of the node, and the job would fail the same way elsewhere.",
            *([verdict(entry)] if entry is not None else []),
        ]
    if entry is not None:
        picked = pick_sentences(entry, ("Fix", "How to confirm"), ("drain", "cordon", "exclude", "node"), 2)
        parts += [f"From the encyclopedia ({entry.id} / {name}): {s}" for name, s in picked]
        cites += [kb_cite(entry, name, s) for name, s in picked]
    return Answer(answer="\n".join(parts), citations=cites)


def about_host(session: ChatSession, question: str) -> Answer:
    """A question naming a host placeholder: did the failure start there, which ranks ran there, its lines."""
    d, log = session.diagnosis, session.log
    host = HOST_RE.findall(question)[0]
    start = d.initiating_host
    if start is None and d.initiating_rank is not None and (named := host_in_lines(session, d.initiating_rank)):
        start = named[0]
    ranks = sorted(r for r, h in log.hosts.items() if h == host)
    lines = search_log(log, [re.compile(re.escape(host))], 3)
    first = first_failure(d)
    parts: list[str] = []
    cites: list[Citation] = [log_cite(x) for x in lines]
    if start == host and d.initiating_rank is not None:
        failed = f": {first.file}:{first.line}: `{error_of(first)}`" if first else ""
        parts.append(f"Yes: the failure started on {host}, on rank {d.initiating_rank}{failed}.")
        cites += [log_cite(first)] if first else []
    elif start is not None:
        parts.append(f"No: the failure started on {start} (rank {d.initiating_rank}), not on {host}.")
    else:
        parts.append(f"The log does not say which host the failure started on. What would answer it: {NO_HOST_HINT}.")
    if ranks:
        groups = [c.summary for c in d.collateral if set(c.ranks) & set(ranks)]
        parts.append(f"Ranks on {host}: {ranks_text(ranks)}" + (f"; they show: {'; '.join(groups)}." if groups else "."))
    if lines:
        parts.append(f"Lines naming {host}:\n" + "\n".join(quote(x) for x in lines))
    elif not ranks:
        parts.append(f"No line of the log names {host} ({searched(log)}).")
    return Answer(answer="\n".join(parts), citations=cites, grounded=bool(cites))
