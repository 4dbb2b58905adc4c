"""What a web session keeps, in bytes: the masked log cut down to what chat needs, and a bounded history.

A small log is kept whole (every line can be quoted). Past ``max_bytes`` the session keeps
windows instead: the lines around the diagnosis's evidence, then around every finding and
event, then the reader's own excerpts, in that order, until the budget is spent; events keep
their first and last lines. The history keeps the last ``MAX_HISTORY`` messages (the model's
prompt uses fewer). The stored form is zlib-compressed JSON, so a store counts real bytes.
"""

from __future__ import annotations

import json
import zlib
from collections.abc import Iterable
from typing import Any

from diagnose.chat.session import Message
from diagnose.parse.lines import make_line
from diagnose.parse.parsed_log import ParsedLog
from diagnose.schema import LogLine
from diagnose.web.sessions import WebSession

MAX_HISTORY = 40
"""Messages kept per session (20 turns): the page shows them, the model's prompt reads the last 12."""
WINDOW = 5
LOG_SHARE = 0.75
"""Share of ``max_bytes`` for the diagnosis and the log; the rest is the history's."""
EVENT_LINES = 40
_COMPRESSION = 1


def encode(session: WebSession, max_bytes: int) -> tuple[bytes, int]:
    """(compressed JSON of the session without history and masking state, uncompressed size), cut to fit ``max_bytes``."""
    data = fit(session, int(max_bytes * LOG_SHARE))
    return zlib.compress(data, _COMPRESSION), len(data)


def encode_state(state: dict[str, Any] | None) -> bytes:
    """The session's masking state as stored (compressed JSON; empty when there is none)."""
    return zlib.compress(json.dumps(state, separators=(",", ":")).encode(), _COMPRESSION) if state is not None else b""


def decode(blob: bytes, history: Iterable[bytes], state: bytes | None = None) -> WebSession:
    """The session from its stored parts: the compressed JSON, the history's messages (JSON each), the masking state."""
    session = WebSession.model_validate_json(zlib.decompress(blob))
    session.history = [Message.model_validate_json(item) for item in history]
    if state:
        session.redactor_state = json.loads(zlib.decompress(state))
    return session


def encode_message(message: Message) -> bytes:
    """One history message as stored."""
    return message.model_dump_json().encode()


def _dump(session: WebSession) -> bytes:
    return session.model_dump_json(exclude={"history", "redactor_state"}).encode()


def fit(session: WebSession, max_bytes: int) -> bytes:
    """The session's JSON (history excluded) within ``max_bytes`` where the log allows; the session is changed in place."""
    log = session.log
    line_bytes = sum(len(text) + 4 for lines in log.lines.values() for text in lines)
    if line_bytes <= max_bytes:
        data = _dump(session)
        if len(data) <= max_bytes:
            return data
    excerpts = _by_priority(session)
    log.lines, log.excerpts, log.complete = {}, [], False
    for event in log.events:
        if len(event.lines) > EVENT_LINES:
            event.lines = event.lines[: EVENT_LINES // 2] + event.lines[-EVENT_LINES // 2 :]
    room = max_bytes - len(_dump(session))
    kept: list[LogLine] = []
    for line in excerpts:
        room -= len(line.model_dump_json()) + 1
        if room < 0:
            log.notes.append(f"kept {len(kept)} of {len(excerpts)} lines around events (the session's byte limit)")
            break
        kept.append(line)
    order = {name: i for i, name in enumerate(log.sources)}
    log.excerpts = sorted(kept, key=lambda line: (order.get(line.source, 0), line.line))
    return _dump(session)


def _anchors(session: WebSession) -> list[tuple[str, int]]:
    """(source, line) of what chat cites, most important first: evidence, findings, events."""
    log = session.log
    found = [(e.file, e.line) for e in session.diagnosis.evidence]
    found += [(f.evidence.source, f.evidence.line) for f in log.findings]
    found += [(line.source, line.line) for event in log.events for line in event.lines[:1]]
    return list(dict.fromkeys(found))


def _by_priority(session: WebSession) -> list[LogLine]:
    """The lines worth keeping, most important first: windows around the anchors, then the reader's excerpts."""
    log: ParsedLog = session.log
    have = {(line.source, line.line): line for line in log.excerpts}

    def line_at(source: str, n: int) -> LogLine | None:
        lines = log.lines.get(source)
        if lines is not None and 0 < n <= len(lines):
            return make_line(source, n, lines[n - 1], rank_hint=log.rank_hints.get(source))
        return have.get((source, n))

    chosen: dict[tuple[str, int], LogLine] = {}
    for source, number in _anchors(session):
        for n in range(max(1, number - WINDOW), number + WINDOW + 1):
            if (source, n) not in chosen and (line := line_at(source, n)) is not None:
                chosen[(source, n)] = line
    for key, line in have.items():
        chosen.setdefault(key, line)
    return list(chosen.values())
