"""The shared session store: a real redis-server, real ``diagnose serve`` processes, ``--workers 2``.

The in-memory default is per process; these tests show both the limit and the fix.
"""

from __future__ import annotations

import re
import time
from pathlib import Path

import httpx
import pytest

from diagnose.chat.session import Message
from diagnose.parse.parsed_log import ParsedLog
from diagnose.schema import Diagnosis, RootCause
from diagnose.web import budget
from diagnose.web.redis_store import RedisSessionStore
from diagnose.web.sessions import Limits, StoreUnavailable, WebSession

from .conftest import EXAMPLE_OOM, diagnose_text, running_server

pytestmark = pytest.mark.server
OOM = EXAMPLE_OOM.read_bytes()


def _children(pid: int) -> list[int]:
    found = []
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = stat.read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        if int(fields[1]) == pid:
            found.append(int(stat.parent.name))
    return found


def test_store_round_trip_with_ttl(redis_url: str) -> None:
    import redis

    store = RedisSessionStore(redis_url, Limits(ttl_s=120, max_sessions=10))
    store.ping()
    session = WebSession(
        diagnosis=Diagnosis(root_cause=RootCause(id="cuda-oom", title="GPU out of memory", confidence=1.0)),
        log=ParsedLog(line_count=3),
        model="openai/x",
    )
    store.put(session)
    raw = redis.Redis.from_url(redis_url)
    key = f"diagnose:session:{session.id}"
    assert 0 < raw.ttl(key) <= 120
    raw.expire(key, 5)
    again = store.get(session.id)
    assert again == session
    assert raw.ttl(key) > 5  # a read restarts the time to live
    assert store.delete(session.id) and store.get(session.id) is None


def test_turns_are_a_list_appended_and_trimmed(redis_url: str) -> None:
    import redis

    store = RedisSessionStore(redis_url, Limits(ttl_s=120, max_sessions=10))
    session = WebSession(
        diagnosis=Diagnosis(root_cause=RootCause(id="cuda-oom", title="GPU out of memory", confidence=1.0)), log=ParsedLog(line_count=3)
    )
    store.put(session)
    raw = redis.Redis.from_url(redis_url)
    history = f"diagnose:session:{session.id}:history"
    before = raw.get(f"diagnose:session:{session.id}")
    for i in range(budget.MAX_HISTORY):
        assert store.append(session.id, [Message(role="user", content=f"q{i}"), Message(role="assistant", content=f"a{i}")])
    assert raw.type(history) == b"list" and raw.llen(history) == budget.MAX_HISTORY
    assert raw.get(f"diagnose:session:{session.id}") == before  # the session itself was not rewritten
    kept = store.get(session.id)
    assert kept is not None and kept.history[-1].content == f"a{budget.MAX_HISTORY - 1}"
    assert 0 < raw.ttl(history) <= 120
    assert store.append("no-such-session", [Message(role="user", content="x")]) is False
    assert not raw.exists("diagnose:session:no-such-session:history")


def test_the_session_cap_and_byte_budget_apply_with_redis(redis_url: str) -> None:
    store = RedisSessionStore(redis_url, Limits(ttl_s=120, max_sessions=5, max_session_bytes=20_000, max_bytes=40_000))
    ids = []
    for i in range(12):
        log = ParsedLog(sources=["a.log"], lines={"a.log": [f"{i} {j} " + format(j * 7919 + i, "x") * 8 for j in range(300)]})
        session = WebSession(diagnosis=Diagnosis(root_cause=RootCause(id="unknown", title="none", confidence=0.0)), log=log)
        store.put(session)
        ids.append(session.id)
        usage = store.usage()
        assert usage.sessions <= 5 and usage.bytes <= 40_000
    assert store.get(ids[-1]) is not None and store.get(ids[0]) is None


def test_sessions_are_shared_between_server_processes(redis_url: str, tmp_path: Path) -> None:
    with (
        running_server(tmp_path / "a", DIAGNOSE_REDIS_URL=redis_url) as first,
        running_server(tmp_path / "b", DIAGNOSE_REDIS_URL=redis_url) as second,
        httpx.Client(base_url=first.url, timeout=60) as a,
        httpx.Client(base_url=second.url, timeout=60) as b,
    ):
        assert a.get("/healthz").json() == {"ok": True, "store": "redis"}
        session_id = diagnose_text(a, OOM)["session_id"]
        answer = b.post(f"/api/sessions/{session_id}/messages", json={"content": "Why rank 5?"})
        assert answer.status_code == 200 and answer.json()["answer"].startswith("Rank 5")
        streamed = b.post(
            f"/api/sessions/{session_id}/messages", json={"content": "How do I fix it?"}, headers={"Accept": "text/event-stream"}
        )
        assert "event: answer" in streamed.text
        history = a.get(f"/api/sessions/{session_id}").json()["history"]
        assert [m["content"] for m in history if m["role"] == "user"] == ["Why rank 5?", "How do I fix it?"]
        assert b.delete(f"/api/sessions/{session_id}").status_code == 204
        assert a.get(f"/api/sessions/{session_id}").status_code == 404


def test_memory_store_is_per_process(tmp_path: Path) -> None:
    """The documented limit of the default: another process does not know the session."""
    with running_server(tmp_path / "a") as first, running_server(tmp_path / "b") as second, httpx.Client(timeout=60) as http:
        created = http.post(f"{first.url}/api/diagnoses", content=OOM, headers={"Content-Type": "text/plain"}).json()
        assert http.get(f"{first.url}/api/sessions/{created['session_id']}").status_code == 200
        assert http.get(f"{second.url}/api/sessions/{created['session_id']}").status_code == 404


def test_two_workers_behind_one_port(redis_url: str, tmp_path: Path) -> None:
    with running_server(tmp_path, "--workers", "2", DIAGNOSE_REDIS_URL=redis_url) as server:
        deadline = time.monotonic() + 30
        while len(_children(server.process.pid)) < 2 and time.monotonic() < deadline:
            time.sleep(0.2)
        assert len(_children(server.process.pid)) >= 2
        for _ in range(4):
            with httpx.Client(base_url=server.url, timeout=60) as http:  # a new connection each time
                session_id = diagnose_text(http, OOM)["session_id"]
            for question in ("Why rank 5?", "How do I verify the fix?"):
                with httpx.Client(base_url=server.url, timeout=60) as http:
                    response = http.post(f"/api/sessions/{session_id}/messages", json={"content": question})
                    assert response.status_code == 200, response.text
            with httpx.Client(base_url=server.url, timeout=60) as http:
                assert len(http.get(f"/api/sessions/{session_id}").json()["history"]) == 4
        assert "sessions: redis (shared)" in server.log_text()


def test_redis_going_away_is_a_503_in_the_error_shape(redis_url: str, tmp_path: Path) -> None:
    import redis

    with running_server(tmp_path, DIAGNOSE_REDIS_URL=redis_url) as server, httpx.Client(base_url=server.url, timeout=60) as http:
        session_id = diagnose_text(http, OOM)["session_id"]
        redis.Redis.from_url(redis_url).shutdown(nosave=True)
        for response in (http.get("/healthz"), http.get(f"/api/sessions/{session_id}")):
            assert response.status_code == 503
            body = response.json()
            assert body["ok"] is False and body["status"] == 503 and "session store" in body["error"]
        assert "Traceback" not in server.log_text()


def test_unreachable_store_raises_store_unavailable() -> None:
    store = RedisSessionStore("redis://127.0.0.1:1/0", Limits(ttl_s=10, max_sessions=10))
    with pytest.raises(StoreUnavailable, match=re.escape("session store redis://127.0.0.1:1/0 failed")):
        store.ping()
