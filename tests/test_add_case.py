"""evals/tools/add_case.py: the split is decided by rule, and a case that breaks a corpus rule is refused."""

from __future__ import annotations

import importlib.util
from pathlib import Path
from types import ModuleType

import pytest
import yaml

from diagnose.evaluation.cases import Label

TOOL = Path(__file__).resolve().parents[1] / "evals" / "tools" / "add_case.py"


@pytest.fixture
def tool(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> ModuleType:
    """The tool, pointed at an empty corpus with two entries."""
    spec = importlib.util.spec_from_file_location("add_case", TOOL)
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    entries = tmp_path / "kb"
    entries.mkdir()
    for name in ("cuda-oom", "user-interrupt"):
        (entries / f"{name}.md").write_text("---\n", encoding="utf-8")
    monkeypatch.setattr(module, "REAL", tmp_path / "real")
    monkeypatch.setattr(module, "ENTRIES", entries)
    monkeypatch.setattr(module, "ROOT", tmp_path)
    return module


def _log(tmp_path: Path) -> Path:
    path = tmp_path / "posted.txt"  # a progress bar's \r does not start a line: lines are numbered as grep -n does
    path.write_bytes(b"step 1\r 10%|#\n\ntorch.OutOfMemoryError: CUDA out of memory.\n")
    return path


def _args(tmp_path: Path, case_id: str, source: str, *extra: str) -> list[str]:
    return [case_id, "--source", source, "--log", str(_log(tmp_path)), "--class", "cuda-oom", "--why", "w", *extra]


def test_split_is_the_parity_of_the_source_hash(tool: ModuleType) -> None:
    splits = {tool.split_of(f"https://github.com/o/r/issues/{n}") for n in range(20)}
    assert splits == {"dev", "test"}
    assert tool.split_of("https://github.com/o/r/issues/1") == tool.split_of("https://github.com/o/r/issues/1")


def test_a_written_case_loads_as_a_label_with_its_log_unchanged(tool: ModuleType, tmp_path: Path) -> None:
    source = "https://github.com/o/r/issues/7"
    assert tool.main(_args(tmp_path, "r0001", source, "--evidence", "3", "--rank", "2", "--rank-proven")) == 0
    label = Label.model_validate(yaml.safe_load((tmp_path / "real/r0001/label.yaml").read_text(encoding="utf-8")))
    assert (label.class_, label.initiating_rank, label.rank_proven, label.evidence) == ("cuda-oom", 2, True, [3])
    assert label.split == tool.split_of(source)
    assert (tmp_path / "real/r0001/log.txt").read_bytes() == _log(tmp_path).read_bytes()


@pytest.mark.parametrize(
    ("extra", "reason"),
    [
        (["--evidence", "2"], "blank"),
        (["--evidence", "9"], "missing"),
        (["--evidence", "3", "--accept", "no-such-entry"], "no encyclopedia entry"),
        (["--evidence", "3", "--rank-proven"], "needs --rank"),
        (["--evidence", "3", "--format", "yarn"], "format"),
    ],
)
def test_a_case_breaking_a_rule_is_refused_and_nothing_is_written(
    tool: ModuleType, tmp_path: Path, capsys: pytest.CaptureFixture[str], extra: list[str], reason: str
) -> None:
    assert tool.main(_args(tmp_path, "r0002", "https://github.com/o/r/issues/8", *extra)) == 2
    assert reason in capsys.readouterr().err
    assert not (tmp_path / "real" / "r0002").exists()


def test_a_source_or_a_committed_log_repository_is_used_once(tool: ModuleType, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    first = "https://github.com/o/logs/blob/abc/run1.log"
    assert tool.main(_args(tmp_path, "r0003", first, "--evidence", "3")) == 0
    assert tool.main(_args(tmp_path, "r0004", first, "--evidence", "3")) == 2
    assert "already in the corpus as r0003" in capsys.readouterr().err
    assert tool.main(_args(tmp_path, "r0005", "https://github.com/o/logs/blob/abc/run2.log", "--evidence", "3")) == 2
    assert "o/logs already gives" in capsys.readouterr().err
    assert tool.main(_args(tmp_path, "r0006", "https://github.com/o/logs/issues/3", "--evidence", "3")) == 0


def test_dev_only_refuses_a_test_source_and_writes_nothing(tool: ModuleType, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    sources = [f"https://github.com/o/r/issues/{n}" for n in range(20)]
    to_test = next(s for s in sources if tool.split_of(s) == "test")
    to_dev = next(s for s in sources if tool.split_of(s) == "dev")
    assert tool.main(_args(tmp_path, "r0007", to_test, "--evidence", "3", "--dev-only")) == 2
    assert "falls in test" in capsys.readouterr().err
    assert not (tmp_path / "real" / "r0007").exists()
    assert tool.main(_args(tmp_path, "r0008", to_dev, "--evidence", "3", "--dev-only")) == 0
