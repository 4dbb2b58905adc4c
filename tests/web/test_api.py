"""The API over real HTTP against ``diagnose serve``: upload, diagnosis, follow-ups (JSON and SSE), sessions, KB, pages."""

from __future__ import annotations

import re

import httpx
import pytest

from .conftest import EXAMPLE_OOM, Server, diagnose_text, read_events

pytestmark = pytest.mark.server
OOM_TEXT = EXAMPLE_OOM.read_text(encoding="utf-8")


def test_healthz_and_info(client: httpx.Client) -> None:
    assert client.get("/healthz").json() == {"ok": True, "store": "memory"}
    info = client.get("/api/info").json()
    sessions, session_bytes = info.pop("sessions"), info.pop("session_bytes")
    assert info == {
        "model": None,
        "retrieval": False,
        "store": "memory",
        "max_upload_mb": 1,
        "session_ttl_s": 3600,
        "max_session_bytes": 2_000_000,
        "max_memory_mb": 256,
    }
    assert sessions >= 0 and session_bytes >= 0


def test_text_upload_diagnoses_the_multi_rank_oom(client: httpx.Client) -> None:
    response = client.post("/api/diagnoses", content=OOM_TEXT, headers={"Content-Type": "text/plain; charset=utf-8"})
    assert response.status_code == 201
    body = response.json()
    assert set(body) == {"session_id", "diagnosis", "timeline_svg"}
    assert response.headers["location"] == f"/api/sessions/{body['session_id']}"
    diagnosis = body["diagnosis"]
    assert diagnosis["root_cause"]["id"] == "cuda-oom"
    assert diagnosis["initiating_rank"] == 5
    assert diagnosis["backend"] == "rules"
    evidence = diagnosis["evidence"][0]
    assert (evidence["file"], evidence["line"], evidence["rank"]) == ("upload.log", 203, 5)
    assert "CUDA out of memory" in evidence["text"]
    assert {c["id"] for c in diagnosis["collateral"]} >= {"nccl-timeout-hang"}
    assert diagnosis["fix"] and diagnosis["verify"]


def test_multipart_upload_keeps_file_names_of_per_rank_files(client: httpx.Client) -> None:
    lines = OOM_TEXT.splitlines(keepends=True)
    files = [
        ("file", ("node-a.log", "".join(lines[:120]), "text/plain")),
        ("file", ("../../etc/node b.log", "".join(lines[120:]), "text/plain")),
    ]
    response = client.post("/api/diagnoses", files=files)
    assert response.status_code == 201, response.text
    diagnosis = response.json()["diagnosis"]
    assert diagnosis["root_cause"]["id"] == "cuda-oom"
    assert diagnosis["evidence"][0]["file"] == "node_b.log"
    assert diagnosis["evidence"][0]["line"] == 203 - 120


def test_redaction_counts_come_first_and_match_the_diagnosis(client: httpx.Client) -> None:
    counts = client.post("/api/redactions", files={"file": ("train.log", OOM_TEXT, "text/plain")}).json()
    assert set(counts) == {"total", "by_type"}
    assert counts["total"] == sum(counts["by_type"].values()) > 0
    assert {"TOKEN", "IP"} <= set(counts["by_type"])
    diagnosis = diagnose_text(client, OOM_TEXT)["diagnosis"]
    assert diagnosis["redactions"] == counts


def test_follow_up_as_json_is_recorded_in_the_history(client: httpx.Client) -> None:
    session_id = diagnose_text(client, OOM_TEXT)["session_id"]
    response = client.post(f"/api/sessions/{session_id}/messages", json={"content": "Why rank 5?"})
    assert response.status_code == 200
    assert response.headers["content-type"] == "application/json"
    answer = response.json()
    assert answer["answer"].startswith("Rank 5")  # the offline answer's wording is the chat's
    assert {"kind": "log", "file": "upload.log", "line": 203, "rank": 5}.items() <= answer["citations"][0].items()
    session = client.get(f"/api/sessions/{session_id}").json()
    assert set(session) == {"session_id", "diagnosis", "history", "model"}
    assert session["diagnosis"]["root_cause"]["id"] == "cuda-oom"
    assert [m["role"] for m in session["history"]] == ["user", "assistant"]
    assert session["history"][0]["content"] == "Why rank 5?"
    assert session["history"][1]["content"] == answer["answer"]


def test_follow_up_streams_as_server_sent_events(client: httpx.Client) -> None:
    session_id = diagnose_text(client, OOM_TEXT)["session_id"]
    response = client.post(
        f"/api/sessions/{session_id}/messages", json={"content": "How do I fix it?"}, headers={"Accept": "text/event-stream"}
    )
    assert response.status_code == 200
    assert response.headers["content-type"].startswith("text/event-stream")
    events = read_events(response)
    names = [name for name, _ in events]
    assert names[-2:] == ["answer", "done"] and names.count("delta") > 5
    streamed = "".join(data["text"] for name, data in events if name == "delta")  # type: ignore[index]
    final = events[-2][1]
    assert streamed == final["answer"]  # type: ignore[index]
    assert "1. " in final["answer"]  # type: ignore[index]  # the fix, as numbered steps (wording is the chat's)
    assert final["citations"][0]["kind"] == "kb" and final["citations"][0]["entry_id"] == "cuda-oom"  # type: ignore[index]
    history = client.get(f"/api/sessions/{session_id}").json()["history"]
    assert history[-1]["content"] == final["answer"]  # type: ignore[index]


def test_deleted_session_is_gone(client: httpx.Client) -> None:
    session_id = diagnose_text(client, OOM_TEXT)["session_id"]
    assert client.delete(f"/api/sessions/{session_id}").status_code == 204
    assert client.get(f"/api/sessions/{session_id}").status_code == 404
    assert client.post(f"/api/sessions/{session_id}/messages", json={"content": "why?"}).status_code == 404
    assert client.delete(f"/api/sessions/{session_id}").status_code == 404


def test_session_ids_are_unguessable(client: httpx.Client) -> None:
    ids = {diagnose_text(client, "[rank0]: hello\n")["session_id"] for _ in range(3)}
    assert len(ids) == 3
    assert all(re.fullmatch(r"[A-Za-z0-9_-]{32,}", i) for i in ids)
    neighbour = next(iter(ids))
    guess = neighbour[:-1] + ("A" if neighbour[-1] != "A" else "B")
    assert client.get(f"/api/sessions/{guess}").status_code == 404


def test_kb_list_and_entry(client: httpx.Client) -> None:
    entries = client.get("/api/kb").json()
    ids = [e["id"] for e in entries]
    assert "cuda-oom" in ids and ids == sorted(ids)
    assert set(entries[0]) == {"id", "title", "kind", "tags", "summary"}
    entry = client.get("/api/kb/cuda-oom").json()
    assert entry["id"] == "cuda-oom" and entry["title"] == "GPU out of memory"
    assert list(entry["sections"])[:2] == ["What it is", "Why it happens"]
    assert entry["fix"] and entry["verify"]


def test_kb_pages_render_sections_and_link_to_each_other(client: httpx.Client) -> None:
    page = client.get("/kb/cuda-oom")
    assert page.status_code == 200 and page.headers["content-type"].startswith("text/html")
    html = page.text
    for anchor in ("what-it-is", "why-it-happens", "what-youll-observe", "fix", "verify"):
        assert f'id="{anchor}"' in html
    assert html.index('id="what-it-is"') < html.index('id="fix"') < html.index('id="verify"')
    assert "<table>" in html  # the Symptoms table
    linked = set(re.findall(r'href="/kb/([a-z0-9-]+)"', html))
    related = set(client.get("/api/kb/cuda-oom").json()["related"])
    assert related and related <= linked
    for entry_id in linked:
        assert client.get(f"/kb/{entry_id}").status_code == 200, entry_id
    assert ".md" not in "".join(re.findall(r'href="([^"]+)"', html))
    index = client.get("/kb").text
    assert all(f'href="/kb/{e["id"]}"' in index for e in client.get("/api/kb").json())
    missing = client.get("/kb/no-such-entry")
    assert missing.status_code == 404 and "No entry" in missing.text


def test_the_page_and_its_assets(client: httpx.Client) -> None:
    page = client.get("/")
    assert page.status_code == 200 and 'id="log-form"' in page.text
    assert "default-src 'self'" in page.headers["content-security-policy"]
    for asset in ("/static/app.js", "/static/style.css", "/static/kb.js", "/kb", "/api/info", "/healthz"):
        response = client.get(asset)
        assert response.status_code == 200, asset
        assert response.headers["x-content-type-options"] == "nosniff", asset
        assert "default-src 'self'" in response.headers["content-security-policy"], asset


def test_openapi_lists_every_route(client: httpx.Client) -> None:
    spec = client.get("/openapi.json").json()
    assert set(spec["paths"]) >= {
        "/api/diagnoses",
        "/api/redactions",
        "/api/sessions/{session_id}",
        "/api/sessions/{session_id}/messages",
        "/api/kb",
        "/api/kb/{entry_id}",
        "/healthz",
    }
    upload = spec["paths"]["/api/diagnoses"]["post"]
    assert set(upload["requestBody"]["content"]) == {"text/plain", "multipart/form-data"}
    assert {"400", "413", "415", "503"} <= set(upload["responses"])
    for page in ("/docs", "/redoc"):  # Swagger UI and ReDoc load from a CDN: off
        assert client.get(page).status_code == 404


def test_access_log_holds_paths_only(server: Server, client: httpx.Client) -> None:
    session_id = diagnose_text(client, OOM_TEXT)["session_id"]
    assert client.get(f"/api/sessions/{session_id}", params={"note": "private-query-value"}).status_code == 200
    log = server.log_text()
    assert '"POST /api/diagnoses HTTP/1.1" 201' in log
    assert '"GET /api/sessions/<id> HTTP/1.1" 200' in log
    assert "OutOfMemoryError" not in log
    assert str(session_id) not in log and "private-query-value" not in log
