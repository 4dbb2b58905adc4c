"""The in-memory session store: time to live, the count and byte limits, appended turns, what a session keeps."""

from __future__ import annotations

import secrets

import pytest

from diagnose.chat.session import Message
from diagnose.parse.parsed_log import ParsedLog
from diagnose.schema import Diagnosis, Evidence, RootCause
from diagnose.web import budget
from diagnose.web.memory_store import MemorySessionStore
from diagnose.web.sessions import Limits, WebSession


class Clock:
    """A clock the test moves by hand."""

    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


def _session(lines: int = 0, width: int = 100) -> WebSession:
    diagnosis = Diagnosis(root_cause=RootCause(id="unknown", title="No known failure found", confidence=0.0))
    log = ParsedLog(sources=["a.log"], line_count=lines)
    if lines:
        # random text, so compression cannot hide the size
        log.lines = {"a.log": [f"[rank{i % 8}]: step {i} " + secrets.token_hex(width // 2) for i in range(lines)]}
        diagnosis.evidence = [Evidence(file="a.log", line=lines // 2, rank=0, text=log.lines["a.log"][lines // 2 - 1])]
    return WebSession(diagnosis=diagnosis, log=log)


@pytest.fixture
def clock() -> Clock:
    return Clock()


def _limits(**kw: int) -> Limits:
    return Limits(**{"ttl_s": 600, "max_sessions": 10, **kw})


def test_sessions_expire_after_their_time_to_live(clock: Clock) -> None:
    store = MemorySessionStore(_limits(ttl_s=60), clock=clock)
    session = _session()
    store.put(session)
    clock.now += 59
    assert store.get(session.id) == session
    clock.now += 59  # the read above restarted the clock
    assert store.get(session.id) == session
    clock.now += 61
    assert store.get(session.id) is None
    assert len(store) == 0


def test_oldest_unused_sessions_go_first_beyond_the_cap(clock: Clock) -> None:
    store = MemorySessionStore(_limits(max_sessions=3), clock=clock)
    sessions = [_session() for _ in range(4)]
    for session in sessions[:3]:
        store.put(session)
        clock.now += 1
    assert store.get(sessions[0].id) is not None  # used again: now the newest
    store.put(sessions[3])
    assert store.get(sessions[1].id) is None
    assert [store.get(s.id) is not None for s in (sessions[0], sessions[2], sessions[3])] == [True, True, True]
    assert len(store) == 3


def test_delete(clock: Clock) -> None:
    store = MemorySessionStore(_limits(), clock=clock)
    session = _session()
    store.put(session)
    assert store.delete(session.id) is True
    assert store.delete(session.id) is False
    assert store.get(session.id) is None


def test_session_json_round_trip_keeps_the_model() -> None:
    session = _session()
    session.model = "openai/gpt-4o-mini"
    again = WebSession.model_validate_json(session.model_dump_json())
    assert again == session and len(session.id) >= 32


def test_a_big_log_keeps_windows_within_the_session_limit() -> None:
    store = MemorySessionStore(_limits(max_session_bytes=200_000))
    session = _session(lines=50_000)
    evidence = session.diagnosis.evidence[0]
    store.put(session)
    kept = store.get(session.id)
    assert kept is not None and not kept.log.complete and kept.log.lines == {}
    assert len(kept.model_dump_json(exclude={"history"})) <= 200_000
    assert kept.log.line_text("a.log", evidence.line) == evidence.text  # the evidence and its window stay
    assert kept.log.line_text("a.log", evidence.line + budget.WINDOW) is not None
    assert store.usage().bytes < 200_000


def test_a_small_log_is_kept_whole() -> None:
    store = MemorySessionStore(_limits())
    session = _session(lines=200)
    store.put(session)
    kept = store.get(session.id)
    assert kept is not None and kept.log.complete and len(kept.log.lines["a.log"]) == 200


def test_the_byte_budget_evicts_the_least_recently_used(clock: Clock) -> None:
    store = MemorySessionStore(_limits(max_sessions=500, max_session_bytes=300_000, max_bytes=1 << 20), clock=clock)
    ids = []
    for _ in range(30):
        session = _session(lines=1500)  # ~150 KB: kept whole, ~80 KB compressed
        store.put(session)
        ids.append(session.id)
        clock.now += 1
        assert store.usage().bytes <= 1 << 20
    usage = store.usage()
    assert 1 < usage.sessions < 30
    assert store.get(ids[-1]) is not None and store.get(ids[0]) is None


def test_turns_are_appended_and_the_history_is_trimmed() -> None:
    store = MemorySessionStore(_limits())
    session = _session()
    store.put(session)
    for i in range(budget.MAX_HISTORY):
        assert store.append(session.id, [Message(role="user", content=f"q{i}"), Message(role="assistant", content=f"a{i}")])
    kept = store.get(session.id)
    assert kept is not None and len(kept.history) == budget.MAX_HISTORY
    assert kept.history[-1].content == f"a{budget.MAX_HISTORY - 1}" and kept.history[0].content == f"q{budget.MAX_HISTORY // 2}"
    assert store.append("no-such-session", [Message(role="user", content="x")]) is False


def test_the_masking_state_is_kept_apart_and_replaced() -> None:
    store = MemorySessionStore(_limits())
    session = _session()
    session.redactor_state = {"placeholders": {"HOST": 2}}
    store.put(session)
    store.append(session.id, [Message(role="user", content="x")], {"placeholders": {"HOST": 3}})
    kept = store.get(session.id)
    assert kept is not None and kept.redactor_state == {"placeholders": {"HOST": 3}}
