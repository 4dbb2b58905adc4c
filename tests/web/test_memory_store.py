"""The in-memory session store: time to live, the size cap, and what a session holds."""

from __future__ import annotations

import pytest

from diagnose.parse.parsed_log import ParsedLog
from diagnose.schema import Diagnosis, RootCause
from diagnose.web.sessions import MemorySessionStore, WebSession


class Clock:
    """A clock the test moves by hand."""

    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


def _session() -> WebSession:
    diagnosis = Diagnosis(root_cause=RootCause(id="unknown", title="No known failure found", confidence=0.0))
    return WebSession(diagnosis=diagnosis, log=ParsedLog())


@pytest.fixture
def clock() -> Clock:
    return Clock()


def test_sessions_expire_after_their_time_to_live(clock: Clock) -> None:
    store = MemorySessionStore(ttl_s=60, max_sessions=10, clock=clock)
    session = _session()
    store.put(session)
    clock.now += 59
    assert store.get(session.id) is session
    clock.now += 59  # the read above restarted the clock
    assert store.get(session.id) is session
    clock.now += 61
    assert store.get(session.id) is None
    assert len(store) == 0


def test_oldest_unused_sessions_go_first_beyond_the_cap(clock: Clock) -> None:
    store = MemorySessionStore(ttl_s=600, max_sessions=3, clock=clock)
    sessions = [_session() for _ in range(4)]
    for session in sessions[:3]:
        store.put(session)
        clock.now += 1
    assert store.get(sessions[0].id) is sessions[0]  # used again: now the newest
    store.put(sessions[3])
    assert store.get(sessions[1].id) is None
    assert [store.get(s.id) is s for s in (sessions[0], sessions[2], sessions[3])] == [True, True, True]
    assert len(store) == 3


def test_delete(clock: Clock) -> None:
    store = MemorySessionStore(ttl_s=600, max_sessions=3, clock=clock)
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
