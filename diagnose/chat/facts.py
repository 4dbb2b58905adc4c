"""What offline answers are made of: the diagnosis's fields, whole sentences of an entry, and the log's own lines.

Every helper returns masked text from the session, and the citations that back it.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator

from diagnose.chat.session import ChatSession, Citation
from diagnose.encyclopedia.entries import Entry, get_entry
from diagnose.errors import KBError
from diagnose.parse.lines import make_line
from diagnose.parse.parsed_log import ParsedLog
from diagnose.schema import Diagnosis, Evidence, LogLine

CITED_SECTION_CHARS = 400
QUOTED_LINE_CHARS = 240
HOST_RE = re.compile(r"<HOST_\d+>")
RANK_RE = re.compile(r"\brank\s*#?\s*(\d+)", re.I)
ENV_RE = re.compile(r"\b([A-Z][A-Z0-9]*_[A-Z0-9_]+)(?:=(\S+))?")
OPS = ("allreduce", "all_reduce", "allgather", "all_gather", "reduce_scatter", "broadcast", "barrier", "alltoall", "send", "recv")
_SENTENCE_END = re.compile(r"(?<=[.!?])\s+(?=[A-Z`(\[*\"'])")
_ABBREVIATION = re.compile(r"(?:\be\.g|\bi\.e|\betc|\bvs|\bcf|\bNo)\.$")
_LINK = re.compile(r"\[([^\]]+)\]\([^)]*\)")
_BULLET = re.compile(r"^\s*(?:[-*]|\d+\.)\s+(?:\[[ xX]\]\s+)?")


def entry_of(diagnosis: Diagnosis | str) -> Entry | None:
    """The encyclopedia entry of a diagnosis's root cause (or of an id), None when unknown or removed."""
    entry_id = diagnosis if isinstance(diagnosis, str) else diagnosis.root_cause.id
    if entry_id == "unknown":
        return None
    try:
        return get_entry(entry_id)
    except KBError:
        return None


def sentences(markdown: str) -> list[str]:
    """Whole sentences of a Markdown fragment: list items and paragraphs split at sentence ends, links as text.

    Tables, headings and code fences are left out; a sentence is never cut.
    """
    blocks: list[str] = []
    current: list[str] = []
    in_fence = False
    for raw in markdown.splitlines():
        if raw.lstrip().startswith("```"):
            in_fence = not in_fence
            continue
        if in_fence or raw.lstrip().startswith(("|", "#")):
            continue
        if not raw.strip() or _BULLET.match(raw):
            if current:
                blocks.append(" ".join(current))
            current = [_BULLET.sub("", raw).strip()] if raw.strip() else []
        else:
            current.append(raw.strip())
    if current:
        blocks.append(" ".join(current))
    out: list[str] = []
    for block in blocks:
        text = _LINK.sub(r"\1", block).replace("**", "").strip()
        out += [s for s in _whole(_SENTENCE_END.split(text)) if len(s) > 3]
    return [s if s[-1] in ".!?:;)`" else s + "." for s in out]


def _whole(pieces: list[str]) -> list[str]:
    """Pieces split at a full stop, joined again where the stop was an abbreviation or inside brackets or code."""
    joined: list[str] = []
    for piece in (p.strip() for p in pieces):
        last = joined[-1] if joined else ""
        if last and (_ABBREVIATION.search(last) or last.count("`") % 2 or last.count("(") > last.count(")")):
            joined[-1] = f"{last} {piece}"
        else:
            joined.append(piece)
    return joined


def pick_sentences(entry: Entry, sections: Iterable[str], terms: Iterable[str], limit: int = 3) -> list[tuple[str, str]]:
    """(section, sentence) of the named sections that mention any term (case-insensitive; no terms: any), at most ``limit``."""
    words = [t.lower() for t in terms if t]
    found: list[tuple[str, str]] = []
    for name in sections:
        for sentence in sentences(entry.section(name)):
            if (not words or any(w in sentence.lower() for w in words)) and not sentence.endswith(":"):
                found.append((name, sentence))
                if len(found) >= limit:
                    return found
    return found


def first_sentences(text: str, max_chars: int = 400) -> str:
    """Whole sentences from the start of ``text``, up to about ``max_chars`` (always at least one)."""
    kept: list[str] = []
    for sentence in sentences(text):
        if sentence.endswith(":"):
            continue
        if kept and sum(len(s) + 1 for s in kept) + len(sentence) > max_chars:
            break
        kept.append(sentence)
    return " ".join(kept)


def kb_cite(entry: Entry, section: str, text: str | None = None) -> Citation:
    """A citation of an entry's section, its text whole sentences."""
    return Citation(
        kind="kb",
        entry_id=entry.id,
        section=section,
        text=text if text is not None else first_sentences(entry.section(section), CITED_SECTION_CHARS),
    )


def log_cite(line: LogLine | Evidence) -> Citation:
    """A citation of one log line."""
    if isinstance(line, Evidence):
        return Citation(kind="log", file=line.file, line=line.line, rank=line.rank, text=line.text)
    return Citation(kind="log", file=line.source, line=line.line, rank=line.rank, text=line.text)


def quote(line: LogLine | Evidence) -> str:
    """``file:line (rank N): text`` for one log line, the text cut at QUOTED_LINE_CHARS with an ellipsis."""
    source = line.file if isinstance(line, Evidence) else line.source
    text = line.text.strip()
    text = text if len(text) <= QUOTED_LINE_CHARS else text[: QUOTED_LINE_CHARS - 1] + "…"
    who = f" (rank {line.rank})" if line.rank is not None else ""
    return f"{source}:{line.line}{who}: {text}"


def error_of(line: LogLine | Evidence) -> str:
    """The error a line reports: its text after the launcher prefix and any ``Error:`` label, trimmed."""
    text = re.sub(r"^\[[^\]]*\]:?\s*(?:\[[^\]]*\]\s*)*", "", line.text.strip())
    match = re.search(r"(?:Error|Exception|error)\s*:\s*(.+)$", text)
    body = (match.group(1) if match else text).strip()
    return body if len(body) <= 160 else body[:159] + "…"


def all_lines(log: ParsedLog) -> Iterator[LogLine]:
    """Every kept line of the log: all of it for a small log, else the windows kept around events."""
    if log.lines:
        for source, kept in log.lines.items():
            for number, text in enumerate(kept, 1):
                yield make_line(source, number, text)
    else:
        yield from log.excerpts


def search_log(log: ParsedLog, patterns: Iterable[re.Pattern[str]], limit: int = 5) -> list[LogLine]:
    """Kept lines that match any pattern, in file order, at most ``limit``."""
    compiled = list(patterns)
    found: list[LogLine] = []
    for line in all_lines(log):
        if any(p.search(line.text) for p in compiled):
            found.append(line)
            if len(found) >= limit:
                break
    return found


def searched(log: ParsedLog) -> str:
    """What a search covered, for an answer that found nothing."""
    ranks = (
        "no rank prefixes"
        if not log.ranks
        else (f"rank {log.ranks[0]}" if len(log.ranks) == 1 else f"ranks {log.ranks[0]}-{log.ranks[-1]}")
    )
    span = f"all {log.line_count} lines" if log.complete else "the windows kept around events"
    return f"{span} of {', '.join(log.sources) or 'the log'}, {ranks}"


def host_of(session: ChatSession, rank: int | None) -> str | None:
    """The masked host of a rank, when the log names it."""
    d = session.diagnosis
    if rank is None:
        return None
    if rank == d.initiating_rank and d.initiating_host:
        return d.initiating_host
    return session.log.hosts.get(rank)


_TASKS = re.compile(r"(<HOST_\d+>)\S*:?\s+tasks?\s+(\d+)(?:-(\d+))?")


def host_in_lines(session: ChatSession, rank: int) -> tuple[str, LogLine] | None:
    """A host the log's own lines tie to a rank (``srun: error: <HOST_4>: tasks 4-7``, a prefix naming both), with the line."""
    for line in all_lines(session.log):
        match = _TASKS.search(line.text)
        if match and int(match.group(2)) <= rank <= int(match.group(3) or match.group(2)):
            return match.group(1), line
        if line.rank == rank and line.host:
            return line.host, line
    return None


def rank_lines(session: ChatSession, rank: int, limit: int = 3) -> list[LogLine]:
    """The failing lines a rank printed: its findings (initiating first), else the anchors of its events."""
    log = session.log
    findings = sorted((f for f in log.findings if f.rank == rank), key=lambda f: (f.role != "initiating", f.order))
    found = [f.evidence for f in findings]
    found += [e.anchor for e in log.events if e.rank == rank and e.role in ("initiating", "cascade")]
    unique = {(line.source, line.line): line for line in found}
    return list(unique.values())[:limit]


def evidence_lines(diagnosis: Diagnosis, limit: int = 2) -> list[Evidence]:
    """The diagnosis's evidence lines, the initiating rank's first."""
    ordered = sorted(diagnosis.evidence, key=lambda e: (e.rank != diagnosis.initiating_rank, e.file, e.line))
    return ordered[:limit]


def mentioned_ranks(question: str) -> list[int]:
    """Ranks the question names (``rank 12``, ``rank #3``)."""
    return sorted({int(n) for n in RANK_RE.findall(question)})


def is_hardware(entry: Entry | None) -> bool:
    """True when the entry's failure lives in the machine or the environment rather than the training code."""
    tags = {"hardware", "gpu-hardware", "network", "infrastructure", "infra", "scheduler", "storage", "node"}
    return entry is not None and bool(tags & set(entry.tags))
