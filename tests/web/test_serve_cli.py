"""``diagnose serve`` refuses unsafe or broken setups before it binds anything, with a clear message."""

from __future__ import annotations

import secrets

import pytest
import typer
from typer.testing import CliRunner

from diagnose.cli import serve
from diagnose.errors import ConfigError
from diagnose.settings import Settings, load_settings

from .conftest import TOKEN


@pytest.fixture
def cli() -> typer.Typer:
    app = typer.Typer()
    app.callback()(lambda: None)
    serve.register(app)
    return app


@pytest.mark.parametrize(
    ("host", "loopback"),
    [
        ("127.0.0.1", True),
        ("127.0.0.2", True),
        ("localhost", True),
        ("::1", True),
        ("[::1]", True),
        ("0.0.0.0", False),
        ("::", False),
        ("10.1.2.3", False),
        ("node07.cluster.internal", False),
    ],
)
def test_loopback(host: str, loopback: bool) -> None:
    assert serve.is_loopback(host) is loopback


def test_non_loopback_needs_a_token(cli: typer.Typer, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("DIAGNOSE_API_TOKEN", raising=False)
    result = CliRunner().invoke(cli, ["serve", "--host", "0.0.0.0", "--port", "1"])
    assert result.exit_code == 2
    assert "set DIAGNOSE_API_TOKEN" in result.output


def test_several_workers_need_the_shared_store(cli: typer.Typer, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("DIAGNOSE_REDIS_URL", raising=False)
    result = CliRunner().invoke(cli, ["serve", "--workers", "3", "--port", "1"])
    assert result.exit_code == 2
    assert "--workers 3 needs a shared session store" in result.output
    assert "DIAGNOSE_REDIS_URL" in result.output


def test_unreachable_redis_is_refused_before_start(cli: typer.Typer, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("DIAGNOSE_REDIS_URL", "redis://:hunter2@127.0.0.1:1/0")
    result = CliRunner().invoke(cli, ["serve", "--workers", "2", "--port", "1"])
    assert result.exit_code == 2
    assert "session store redis://127.0.0.1:1/0 failed" in result.output
    assert "hunter2" not in result.output


def test_notes_at_start_say_what_is_required() -> None:
    notes = serve.check_serve("0.0.0.0", 2, Settings(api_token=TOKEN, redis_url="redis://127.0.0.1:6379/0"))
    assert any("Authorization: Bearer" in note for note in notes)
    assert any("redis (shared)" in note for note in notes)
    assert "in memory (this process only)" in serve.check_serve("127.0.0.1", 1, Settings())[0]


def test_web_settings_come_from_the_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("DIAGNOSE_API_TOKEN", "zq9-secret-value")
    monkeypatch.setenv("DIAGNOSE_RETRIEVAL", "0")
    monkeypatch.setenv("DIAGNOSE_SESSION_TTL", "90")
    config = load_settings()
    assert (config.token(), config.retrieval, config.session_ttl) == ("zq9-secret-value", False, 90)
    assert "zq9-secret-value" not in repr(config)
    monkeypatch.setenv("DIAGNOSE_SESSION_TTL", "-5")
    with pytest.raises(ConfigError, match="DIAGNOSE_SESSION_TTL"):
        load_settings()


@pytest.mark.parametrize("token", ["a", " ", "s3cret-test-token", "0123456789abcdef" * 3, "a" * 80, "ab cd" * 12])
def test_weak_tokens_are_refused_at_start(cli: typer.Typer, monkeypatch: pytest.MonkeyPatch, token: str) -> None:
    monkeypatch.setenv("DIAGNOSE_API_TOKEN", token)
    result = CliRunner().invoke(cli, ["serve", "--port", "1"])
    assert result.exit_code == 2
    assert "DIAGNOSE_API_TOKEN" in result.output and "--new-token" in result.output
    assert "Traceback" not in result.output


def test_new_token_is_strong_and_accepted(cli: typer.Typer, monkeypatch: pytest.MonkeyPatch) -> None:
    result = CliRunner().invoke(cli, ["serve", "--new-token"])
    assert result.exit_code == 0
    token = result.output.strip()
    assert len(token) >= 43 and token != CliRunner().invoke(cli, ["serve", "--new-token"]).output.strip()
    serve.check_serve("0.0.0.0", 1, Settings(api_token=token))  # no ConfigError
    serve.check_serve("0.0.0.0", 1, Settings(api_token=secrets.token_hex(32)))  # openssl rand -hex 32


def test_session_limits_must_hold_one_session() -> None:
    with pytest.raises(ConfigError, match="DIAGNOSE_MAX_SESSION_BYTES"):
        serve.check_serve("127.0.0.1", 1, Settings(max_session_bytes=3 << 20, max_memory_mb=2))
