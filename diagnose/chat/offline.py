"""Offline answers to follow-up questions: an intent recognised from the question, answered from grounded sources.

Answers are built from the diagnosis's structured fields (rank, host, collateral, evidence quoted with
line numbers, candidates), the entry's sections chosen by the question (whole sentences) and the log's
own lines. A question the log cannot answer is answered so, with what would answer it. Each answer
cites the masked log and the encyclopedia; with no model configured this is the chat.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator

from diagnose.chat import answers_later, answers_more, answers_node, answers_run, dumps
from diagnose.chat.facts import (
    CITED_SECTION_CHARS,
    QUOTED_LINE_CHARS,
    entry_of,
    error_of,
    kb_cite,
    log_cite,
    mentioned_ranks,
    quote,
    rank_lines,
    search_log,
    searched,
    sentences,
)
from diagnose.chat.session import Answer, ChatSession, Citation
from diagnose.encyclopedia.entries import Entry, load_entries

__all__ = ["CITED_SECTION_CHARS", "INTENTS", "QUOTED_LINE_CHARS", "answer_offline", "offline_responder"]

TOPICS: list[tuple[re.Pattern[str], re.Pattern[str], str, str]] = [
    (
        re.compile(r"(?i)\b(?:which|what) [\w ]{0,20}\bversions?\b|\bversions? of\b"),
        re.compile(r"(?i)\bversion\b|\bv?\d+\.\d+\.\d+(?:\+cu\d+)?\b"),
        "which versions ran",
        "`python -m torch.utils.collect_env` and `nvidia-smi` on the node, or `NCCL_DEBUG=INFO` (prints the NCCL version)",
    ),
    (
        re.compile(
            r"(?i)\bwhat (?:was |is )?(?:the )?(?:learning rate|lr)\b|\b(?:learning rate|lr) (?:was|is) (?:it|this run)|"
            r"\bwhich (?:optimi[sz]er|hyper-?parameters?)\b|\bwhat [\w ]{0,20}(?:learning rate|hyper-?parameters?)\b(?! help)"
        ),
        re.compile(r"(?i)\blr\b|learning.rate|warmup"),
        "the learning rate or optimizer settings",
        "the run's config file or command line (the arguments it was launched with)",
    ),
    (
        re.compile(
            r"(?i)\b(?:which|what) (?:gpu|card) (?:model|type)|\bgpu (?:model|type)\b|\bwhat (?:gpus|kind of gpus?)\b|"
            r"\bwhich gpus (?:do|does|did|are)\b"
        ),
        re.compile(r"A100|H100|H200|V100|L40|RTX|B200"),
        "which GPU model the nodes have",
        "`nvidia-smi -L` on each node",
    ),
    (
        re.compile(r"(?i)\bcost|\bprice|\bhow much (?:money|does)|\bweather\b|\bwho (?:wrote|is)\b|\bjoke\b|\bpoem\b"),
        re.compile(r"(?!)"),
        "that: it is outside this run's log and the encyclopedia",
        "nothing in the log; ask the source that owns it (your provider, your team)",
    ),
]


def _fix(session: ChatSession, question: str) -> Answer:
    d, entry = session.diagnosis, entry_of(session.diagnosis)
    if entry is None or not d.fix:
        return _fallback(session, question)
    steps = "\n".join(f"{i}. {step}" for i, step in enumerate(d.fix, 1))
    first = answers_run.first_failure(d)
    lead = f"For {d.root_cause.title}" + (f" ({first.file}:{first.line}: `{error_of(first)}`)" if first else "")
    cites = [kb_cite(entry, "Fix")] + ([log_cite(first)] if first else [])
    return Answer(answer=f"{lead}:\n{steps}", citations=cites)


def _verify(session: ChatSession, question: str) -> Answer:
    d, entry = session.diagnosis, entry_of(session.diagnosis)
    if entry is None or not d.verify:
        return _fallback(session, question)
    return Answer(answer="Run these to verify:\n" + "\n".join(f"$ {c}" for c in d.verify), citations=[kb_cite(entry, "Verify")])


def _evidence(session: ChatSession, question: str) -> Answer:
    d = session.diagnosis
    if not d.evidence:
        return Answer(
            answer=(
                "The log does not have evidence lines for a known failure. What would answer it: the full "
                f"log of the first failing rank ({searched(session.log)} were searched)."
            ),
            grounded=False,
        )
    return Answer(answer="\n".join(quote(e) for e in d.evidence), citations=[log_cite(e) for e in d.evidence])


def _rank_lines(session: ChatSession, question: str) -> Answer:
    rank = mentioned_ranks(question)[0]
    found = rank_lines(session, rank, 15)
    if not found:
        return Answer(
            answer=(
                f"The log does not show an error or event on rank {rank} ({searched(session.log)}). What "
                f"would answer it: rank {rank}'s own log (`torchrun --log-dir`, one file per rank)."
            ),
            grounded=False,
        )
    cites = [log_cite(line) for line in found]
    return Answer(answer="\n".join(quote(line) for line in found), citations=cites)


def _next_run(session: ChatSession, question: str) -> Answer:
    d, entry = session.diagnosis, entry_of(session.diagnosis)
    if not d.next_run:
        return _fallback(session, question)
    cites = [kb_cite(entry, "Before the next run")] if entry else []
    return Answer(answer="Turn these on before the next run:\n" + "\n".join(f"- {x}" for x in d.next_run), citations=cites)


def _words(text: str) -> set[str]:
    return set(re.findall(r"[a-z][a-z0-9_]{3,}", text.lower())) - {"what", "which", "does", "this", "that", "with", "there"}


def _closest(question: str) -> list[tuple[Entry, str, str]]:
    """Encyclopedia sentences sharing the most words with the question (entry, section, sentence)."""
    words = _words(question)
    scored: list[tuple[int, Entry, str, str]] = []
    for entry in load_entries():
        for name in ("What it is", "Why it happens", "Fix"):
            for sentence in sentences(entry.section(name)):
                overlap = len(words & _words(sentence))
                if overlap >= 2 and not sentence.endswith(":"):
                    scored.append((overlap, entry, name, sentence))
    scored.sort(key=lambda item: -item[0])
    return [(e, n, s) for _, e, n, s in scored[:3]]


def _fallback(session: ChatSession, question: str) -> Answer:
    """No intent: the log's lines naming what was asked; else an honest "the log does not say", with the closest material."""
    log = session.log
    for asked, in_log, topic, hint in TOPICS:
        if asked.search(question):
            hits = search_log(log, [in_log], 3)
            if hits:
                return Answer(answer="The log mentions it:\n" + "\n".join(quote(h) for h in hits), citations=[log_cite(h) for h in hits])
            return Answer(answer=f"The log does not say {topic}. What would answer it: {hint}.", grounded=False)
    patterns = answers_more.mentions(session, question)
    hits = search_log(log, patterns, 6) if patterns else []
    if hits:
        return Answer(
            answer="Lines in the log that mention it:\n" + "\n".join(quote(h) for h in hits), citations=[log_cite(h) for h in hits]
        )
    parts = [
        f"The log does not say that: nothing in it matches the question ({searched(log)}). What would answer it: "
        "a log that covers it (every rank's output with timestamps, `NCCL_DEBUG=INFO`), or the run's config."
    ]
    closest = _closest(question)
    citations: list[Citation] = [kb_cite(e, n, s) for e, n, s in closest]
    if closest:
        parts.append("The closest material in the encyclopedia (not a diagnosis of this log):")
        parts += [f"- {e.id} / {n}: {s}" for e, n, s in closest]
    return Answer(answer="\n".join(parts), citations=citations, grounded=False)


Handler = Callable[[ChatSession, str], Answer]

INTENTS: list[tuple[re.Pattern[str], Handler]] = [
    (dumps.LAST_COMPLETED, dumps.last_completed),  # Flight Recorder dumps (issue 15): what every rank completed last
    (dumps.STUCK, dumps.stuck),  # ... and which collective a rank was stuck in
    (
        re.compile(r"\blines? (?:around|near|before|after)\b|\bline \d+|\bcontext (?:around|of)\b|\baround line\b", re.I),
        answers_more.lines_around,
    ),
    (
        re.compile(
            r"\bdrain\b|\bcordon\b|\bwhich (?:node|host|machine|server)\b|\bbad (?:node|host|machine)\b|"
            r"\bexclude\b.*\b(?:node|host)\b|\bwhat (?:do|should) i do with (?:the |that )?(?:node|host|rank)",
            re.I,
        ),
        answers_node.which_node,
    ),
    (re.compile(r"\bresum|\bcheckpoint\b|\brestart (?:from|training|the run)", re.I), answers_later.resume),
    (
        re.compile(
            r"\bafter (?:\d+|an?|many|several|a few|some)? ?(?:hours?|days?|minutes?)\b|\bonly (?:after|late)\b|\bso late\b|"
            r"\bran fine for\b|\bfor hours\b|\bhours? (?:in|into)\b",
            re.I,
        ),
        answers_later.after_hours,
    ),
    (
        re.compile(
            r"\b(?:would|will|does|do|could|might)\b[^?]{0,80}\bhelp\b|"
            r"\bshould i (?:set|use|try|increase|raise|lower|reduce|disable|enable)\b|"
            r"[A-Z][A-Z0-9]*_[A-Z0-9_]+=\S+|\b(?:increase|raise|longer|bigger)\b.*\btime ?out\b|"
            r"\bsmaller batch\b|\breduc\w* (?:the )?batch\b",
            re.I,
        ),
        answers_more.setting,
    ),
    (
        re.compile(
            r"\bwhy\b.*\brank\b|\bwhich rank\b|\bwhich (?:gpu|process|worker)\b|\bfail(?:ed)? first\b|"
            r"\bwho (?:failed|started)\b|\bbad rank\b|\bfirst to fail\b",
            re.I,
        ),
        answers_run.why_rank,
    ),
    (
        re.compile(
            r"\bhardware\b|\bmy code\b|\bbug in\b|\bmy (?:model|script)\b|\bis (?:it|this) (?:the )?(?:gpu|cluster|machine)\b", re.I
        ),
        answers_run.hardware_or_code,
    ),
    (re.compile(r"\bverify (?:the )?fix\b|\bhow do i verify\b", re.I), _verify),
    (
        re.compile(r"\bconfirm\b|\breproduc|\bmake sure\b|\bprove\b|\bcheck (?:it|that|whether)\b|\bverif|\bsure it", re.I),
        answers_more.confirm,
    ),
    (re.compile(r"\bfix\b|\bsolve\b|\bresolve\b|\bwhat (?:should|do) i do\b|\bhow do i get\b", re.I), _fix),
    (
        re.compile(
            r"\bwhat else\b|\balternativ|\bother (?:cause|explanation|candidate|possibilit)|\bcould it (?:also )?be\b|"
            r"\bwhy not\b|\brule out\b",
            re.I,
        ),
        answers_more.alternatives,
    ),
    (re.compile(r"\bevidence\b|\bshow (?:me )?the (?:lines|errors)\b|\bproof\b", re.I), _evidence),
    (re.compile(r"\bon rank \d+|\brank \d+(?:'s)? (?:lines|output|log)|\bhappened (?:on|to|with) rank \d+", re.I), _rank_lines),
    (re.compile(r"<HOST_\d+>"), answers_node.about_host),
    (
        re.compile(
            r"\bexplain\b|\bunderstand\b|\bwhat (?:does|did) (?:this|that|the|it)\b.*\bmean\b|\bwhat happened\b|\bwhy did (?:it|this|the)",
            re.I,
        ),
        answers_run.explain,
    ),
    (re.compile(r"\bnext time\b|\bnext run\b|\bturn on\b|\bwhat should i log\b|\bmore (?:info|logging)\b", re.I), _next_run),
]


def answer_offline(session: ChatSession, question: str) -> Answer:
    """Answer a follow-up from the session's masked log and the encyclopedia, citing sources."""
    if any(asked.search(question) for asked, *_ in TOPICS):
        return _fallback(session, question)
    for pattern, handler in INTENTS:
        if pattern.search(question):
            return handler(session, question)
    return _fallback(session, question)


def offline_responder(session: ChatSession, question: str) -> Iterator[str | Answer]:
    """The offline answer, streamed word by word."""
    result = answer_offline(session, question)
    yield from re.findall(r"\S+\s*", result.answer)
    yield result
