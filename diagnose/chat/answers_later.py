"""Offline answers about time: why the failure came only after hours, and whether to resume from a checkpoint."""

from __future__ import annotations

from datetime import UTC, datetime

from diagnose.chat.answers_run import first_failure
from diagnose.chat.facts import all_lines, entry_of, error_of, host_of, kb_cite, log_cite, pick_sentences
from diagnose.chat.session import Answer, ChatSession, Citation
from diagnose.parse.timestamps import YEARLESS, parse_timestamp
from diagnose.schema import Evidence


def _stamp(seconds: float) -> str:
    return datetime.fromtimestamp(seconds, UTC).strftime("%Y-%m-%d %H:%M:%S")


def after_hours(session: ChatSession, question: str) -> Answer:
    """Why it failed only late in the run: when it started and failed (from the log's timestamps) and the mechanism."""
    d = session.diagnosis
    entry = entry_of(d)
    first = first_failure(d)
    cites: list[Citation] = [log_cite(first)] if first else []
    parts: list[str] = []
    failed_at = _failure_time(session, first) if first else None
    started = _first_timestamp(session, failed_at) if failed_at is not None else None
    if first is not None and failed_at is not None and started is not None and failed_at - started > 600:
        hours = (failed_at - started) / 3600
        parts.append(
            f"The log starts at {_stamp(started)} and the failure comes at {_stamp(failed_at)} "
            f"({hours:.1f} h later), at {first.file}:{first.line}: `{error_of(first)}`."
        )
    elif first is not None:
        parts.append(
            f"The failure is at {first.file}:{first.line}: `{error_of(first)}`; the log does not say how long "
            "the run went before it (no timestamps that place the failure against the start). What would answer "
            "it: timestamps on every line (the logging formatter's `%(asctime)s`, or the launcher's)."
        )
    else:
        parts.append(
            "The log does not say why the failure came late: no failing line was found. What would answer it: "
            "the full log of the first failing rank, with timestamps."
        )
    if entry is not None:
        terms = (
            "hour",
            "over time",
            "gradual",
            "grows",
            "accumulat",
            "fragment",
            "overheat",
            "thermal",
            "sustained",
            "under load",
            "heavy load",
            "after minutes",
            "later in",
            "rare",
            "one batch",
            "a batch",
            "particular",
            "eventually",
            "long run",
            "diverge",
        )
        picked = pick_sentences(entry, ("Why it happens", "What you'll observe", "What it is"), terms, 2)
        parts += [f"Why that can take hours ({entry.id}): {s}" for _, s in picked]
        cites += [kb_cite(entry, name, s) for name, s in picked]
    return Answer(answer="\n".join(parts), citations=cites)


def _failure_time(session: ChatSession, first: Evidence) -> float | None:
    """When the first failing line was printed: its own or the next lines' timestamp, else the reader's for its finding."""
    for n in range(first.line, first.line + 6):
        text = session.log.line_text(first.file, n)
        stamp = parse_timestamp(text) if text else None
        if stamp is not None:
            return stamp
    stamps = [f.timestamp for f in session.log.findings if (f.evidence.source, f.evidence.line) == (first.file, first.line)]
    return next((t for t in stamps if t), None)


MAX_RUN = 60 * 86400.0
"""The longest run an elapsed time is computed over (60 days)."""


def _same_year(stamp: float, other: float) -> float:
    """A year-less stamp (glog, syslog: read as 1972) moved into the year of ``other``."""
    moment = datetime.fromtimestamp(stamp, UTC)
    if moment.year > YEARLESS:
        return stamp
    year = datetime.fromtimestamp(other, UTC).year
    try:
        return moment.replace(year=year).timestamp()
    except ValueError:  # 29 February
        return stamp


def _first_timestamp(session: ChatSession, failed_at: float) -> float | None:
    """The earliest stamped line in the run before the failure (within MAX_RUN; older dates are other runs or noise)."""
    for n, line in enumerate(all_lines(session.log)):
        stamp = parse_timestamp(line.text)
        if stamp is not None:
            stamp = _same_year(stamp, failed_at)
            if failed_at - MAX_RUN <= stamp <= failed_at:
                return stamp
        if n > 5000:
            break
    return None


def resume(session: ChatSession, question: str) -> Answer:
    """Whether to resume from the checkpoint: for this cause, as is, after a fix, or from an earlier one."""
    d = session.diagnosis
    entry = entry_of(d)
    first = first_failure(d)
    cites: list[Citation] = [log_cite(first)] if first else []
    rid = d.root_cause.id
    where = f" ({first.file}:{first.line})" if first else ""
    host = host_of(session, d.initiating_rank)
    if entry is None:
        return Answer(
            answer=(
                "The log does not say whether the checkpoint is safe: no known failure matched. What would "
                "answer it: the step of the last checkpoint and the first error's step."
            ),
            citations=cites,
            grounded=bool(cites),
        )
    if rid in ("loss-divergence-nan", "nan-on-one-rank", "fp16-loss-scale-collapse"):
        parts = [
            f"Resume from a checkpoint saved before the numbers went bad{where}, not necessarily the last one: "
            "a checkpoint written after the first NaN or overflow may already hold bad weights or optimizer state."
        ]
    elif rid == "checkpoint-mismatch":
        parts = [
            f"Resuming is what fails here{where}: the checkpoint does not match the model being built. Load it "
            "only with the same model configuration it was saved with."
        ]
    elif entry.fault == "person":
        parts = [f"Yes: resume from the last checkpoint; nothing failed, a person stopped the run{where}."]
    elif entry.fault == "machine":
        away = f" away from {host}" if host else " on healthy nodes"
        parts = [f"Yes: resume from the last checkpoint{away}; the fault was in the machine, not in the model state{where}."]
    else:
        parts = [
            f"Resume only after the fix: resuming as is hits the same {entry.title} again{where}, because the cause "
            "is in the code, data, configuration or environment, not in the checkpoint."
        ]
    picked = pick_sentences(entry, ("Fix", "Prevention"), ("checkpoint", "resume", "restart"), 2)
    picked = picked or pick_sentences(entry, ("Fix",), (), 1)
    parts += [f"From the encyclopedia ({entry.id} / {name}): {s}" for name, s in picked]
    cites += [kb_cite(entry, name, s) for name, s in picked]
    return Answer(answer="\n".join(parts), citations=cites)
