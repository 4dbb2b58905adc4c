"""The presidio side: an explicit registry, no network, no heavy import on ``import redaction``."""

from __future__ import annotations

import logging
import socket
import subprocess
import sys
from pathlib import Path

import pytest

from redaction import Redactor
from redaction.engine import PatternRecognizer, RecognizerRegistry, build_registry

REPO = Path(__file__).resolve().parents[2]


def test_the_registry_is_explicit_and_holds_only_pattern_recognizers() -> None:
    registry = build_registry()
    assert isinstance(registry, RecognizerRegistry)
    names = [rec.name for rec in registry.recognizers]
    assert all(isinstance(rec, PatternRecognizer) for rec in registry.recognizers)
    assert "EmailRecognizer" in names
    assert any(name.startswith("gitleaks:") for name in names)
    assert len(names) == len(set(names))


def test_importing_redaction_does_not_import_presidio() -> None:
    code = "import sys, redaction; print('presidio_analyzer' in sys.modules)"
    result = subprocess.run([sys.executable, "-c", code], cwd=REPO, capture_output=True, text=True, check=True)
    assert result.stdout.strip() == "False"


def test_redaction_works_with_every_name_lookup_refused(monkeypatch: pytest.MonkeyPatch) -> None:
    def refuse(*args: object, **kwargs: object) -> None:
        raise AssertionError(f"redaction tried the network: {args!r}")

    monkeypatch.setattr(socket, "getaddrinfo", refuse)
    monkeypatch.setattr(socket, "create_connection", refuse)
    masked = Redactor().redact_line("mail alice@example.co.uk at gpu-node-01.cluster.internal via https://wandb.ai/alice")
    assert masked == "mail <EMAIL_1> at <HOST_1> via https://wandb.ai/<USER_1>"


def test_nothing_secret_reaches_the_logs(caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.DEBUG)
    secret = "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"
    redactor = Redactor()
    redactor.redact_text(f"HF_TOKEN={secret}\nnode07: alice@example.com")
    assert secret not in caplog.text
    assert "alice" not in caplog.text


def test_threads_starting_together_build_the_shared_engine_once(monkeypatch: pytest.MonkeyPatch) -> None:
    import threading

    from redaction import engine

    builds: list[int] = []
    real = engine.build_registry

    def counted(*args: object, **kwargs: object) -> object:
        builds.append(1)
        return real(*args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(engine, "build_registry", counted)
    engine._built.cache_clear()
    barrier = threading.Barrier(6)
    results: list[object] = []

    def start() -> None:
        barrier.wait()
        results.append(engine.shared_engine(use_hyperscan=False))

    threads = [threading.Thread(target=start) for _ in range(6)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    engine._built.cache_clear()  # the next test builds its own, with the real registry
    assert len(builds) == 1 and len({id(r) for r in results}) == 1
