"""One settings model: precedence flag > environment > config.toml > default, validation, and the README's table."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from diagnose.errors import ConfigError
from diagnose.settings import Settings, load_settings, settings_table, user_dir

README = Path(__file__).resolve().parents[1] / "README.md"


def _write_config(text: str) -> None:
    user_dir().mkdir(parents=True, exist_ok=True)
    (user_dir() / "config.toml").write_text(text, encoding="utf-8")


@pytest.fixture(autouse=True)
def _no_config_file() -> object:
    path = user_dir() / "config.toml"
    yield
    path.unlink(missing_ok=True)


def test_flag_beats_environment_beats_config_file_beats_default(monkeypatch: pytest.MonkeyPatch) -> None:
    assert load_settings().llm_timeout == Settings.model_fields["llm_timeout"].default
    _write_config('model = "from-file"\nllm_timeout = 12.5\nsession_ttl = 77\n')
    assert (load_settings().model, load_settings().llm_timeout) == ("from-file", 12.5)
    monkeypatch.setenv("DIAGNOSE_MODEL", "from-env")
    assert load_settings().model == "from-env"
    assert load_settings(model="from-flag").model == "from-flag"
    assert load_settings(model=None).model == "from-env"  # a flag not given hides nothing
    assert load_settings().session_ttl == 77


def test_web_switches_share_the_model(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("DIAGNOSE_ALLOWED_MODELS", "openai/a, ollama_chat/b,")
    monkeypatch.setenv("DIAGNOSE_RETRIEVAL", "0")
    monkeypatch.setenv("DIAGNOSE_API_TOKEN", "a-token-value-that-must-not-show")
    settings = load_settings()
    assert settings.allowed_models == ["openai/a", "ollama_chat/b"]
    assert settings.retrieval is False
    assert settings.token() == "a-token-value-that-must-not-show"
    assert "a-token-value-that-must-not-show" not in repr(settings)


@pytest.mark.parametrize(
    ("config", "message"),
    [
        ("modle = 'typo'\n", "modle"),
        ("llm_timeout = -1\n", "llm_timeout"),
        ("model = [unclosed\n", "config.toml"),
    ],
)
def test_a_bad_config_file_is_a_clear_error(config: str, message: str) -> None:
    _write_config(config)
    with pytest.raises(ConfigError, match=message):
        load_settings()


def test_an_empty_variable_counts_as_unset(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("DIAGNOSE_MODEL", "")
    assert load_settings().model is None


def test_the_readme_table_is_the_models() -> None:
    text = README.read_text(encoding="utf-8")
    block = re.search(r"<!-- settings-table:start[^>]*-->\n(.*?)\n<!-- settings-table:end -->", text, re.S)
    assert block is not None, "README lost its settings table markers"
    assert block.group(1) == settings_table()
    for name in Settings.model_fields:
        assert f"`DIAGNOSE_{name.upper()}`" in block.group(1)
