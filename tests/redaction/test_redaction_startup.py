"""Start-up: the compiled prefilter is cached on disk, patterns compile lazily, imports form no cycle."""

from __future__ import annotations

import ast
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from redaction.cache import cache_dir
from redaction.prefilter import Prefilter, hyperscan, source_key

REPO = Path(__file__).resolve().parents[2]
PATTERNS = [(r"hf_[A-Za-z0-9]{30}", False, 0), (r"(?i)password\s*[=:]", True, 1), (r"[0-9]+\.[0-9]+\.[0-9]+\.[0-9]+", False, 2)]
TEXT = b"ok\nHF_TOKEN=hf_abcdefghijabcdefghijabcdefghij\nPassword: x\nip 10.0.0.1\n"
needs_hyperscan = pytest.mark.skipif(hyperscan is None, reason="hyperscan is not installed")


@needs_hyperscan
def test_the_prefilter_database_is_cached_and_reloaded(tmp_path: Path) -> None:
    first = Prefilter(PATTERNS, cache_dir=tmp_path)
    assert not first.loaded_from_cache
    assert list(tmp_path.glob("redaction-prefilter-*.hsdb"))
    second = Prefilter(PATTERNS, cache_dir=tmp_path)
    assert second.loaded_from_cache
    assert second.scan(TEXT, second.new_scratch()) == first.scan(TEXT, first.new_scratch())


@needs_hyperscan
@pytest.mark.parametrize("damage", ["truncate", "flip", "garbage", "empty"])
def test_when_the_cached_database_is_corrupt_then_it_is_rebuilt(tmp_path: Path, damage: str) -> None:
    reference = Prefilter(PATTERNS, cache_dir=tmp_path)
    path = next(tmp_path.glob("redaction-prefilter-*.hsdb"))
    raw = path.read_bytes()
    path.write_bytes(
        {
            "truncate": raw[: len(raw) // 2],
            "flip": raw[:-100] + bytes(b ^ 0xFF for b in raw[-100:]),
            "garbage": os.urandom(len(raw)),
            "empty": b"",
        }[damage]
    )
    rebuilt = Prefilter(PATTERNS, cache_dir=tmp_path)
    assert not rebuilt.loaded_from_cache
    assert rebuilt.scan(TEXT, rebuilt.new_scratch()) == reference.scan(TEXT, reference.new_scratch())
    assert Prefilter(PATTERNS, cache_dir=tmp_path).loaded_from_cache  # rewritten


@needs_hyperscan
def test_when_a_pattern_changes_then_another_cache_file_is_used(tmp_path: Path) -> None:
    Prefilter(PATTERNS, cache_dir=tmp_path)
    changed = [*PATTERNS[:2], (r"[0-9]+\.[0-9]+", False, 2)]
    assert source_key(changed) != source_key(PATTERNS)
    assert not Prefilter(changed, cache_dir=tmp_path).loaded_from_cache
    assert len(list(tmp_path.glob("redaction-prefilter-*.hsdb"))) == 2


@needs_hyperscan
def test_when_the_cache_directory_cannot_be_written_then_the_prefilter_still_works(tmp_path: Path) -> None:
    blocker = tmp_path / "file"
    blocker.write_text("not a directory")
    prefilter = Prefilter(PATTERNS, cache_dir=blocker / "cache")
    assert prefilter.scan(TEXT, prefilter.new_scratch()).candidates


def test_the_cache_directory_follows_diagnose_home_then_xdg(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("DIAGNOSE_HOME", str(tmp_path / "home"))
    assert cache_dir() == tmp_path / "home" / "cache"
    monkeypatch.delenv("DIAGNOSE_HOME")
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    assert cache_dir() == tmp_path / "xdg" / "diagnose" / "cache"


def test_a_fresh_process_writes_then_reuses_the_cache(tmp_path: Path) -> None:
    env = {**os.environ, "DIAGNOSE_HOME": str(tmp_path)}
    code = "from redaction import Redactor; print(Redactor().redact_text('MASTER_ADDR=node-7'))"
    for _ in range(2):
        out = subprocess.run([sys.executable, "-c", code], cwd=REPO, env=env, capture_output=True, text=True, check=True)
        assert out.stdout.strip() == "MASTER_ADDR=<HOST_1>"
    if hyperscan is not None:
        assert len(list((tmp_path / "cache").glob("redaction-prefilter-*.hsdb"))) == 1


def test_every_recognizer_pattern_compiles() -> None:
    from redaction.engine import build_registry

    for recognizer in build_registry().recognizers:
        for pattern in recognizer.patterns:
            assert pattern.compiled_regex.pattern == pattern.regex


def _imports(path: Path) -> set[str]:
    """Every ``redaction.*`` module ``path`` imports, at the top or inside functions."""
    found = set()
    for node in ast.walk(ast.parse(path.read_text("utf-8"))):
        if isinstance(node, ast.ImportFrom) and node.module and node.module.startswith("redaction"):
            found.add(node.module)
        elif isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names if alias.name.startswith("redaction"))
    return found


def test_the_redaction_modules_import_each_other_without_a_cycle() -> None:
    root = REPO / "redaction"
    modules = {".".join(path.relative_to(REPO).with_suffix("").parts).removesuffix(".__init__"): path for path in root.rglob("*.py")}
    graph = {name: {dep for dep in _imports(path) if dep in modules and dep != name} for name, path in modules.items()}
    state: dict[str, int] = {}

    def visit(name: str, trail: list[str]) -> None:
        state[name] = 1
        for dep in graph[name]:
            assert state.get(dep) != 1, f"import cycle: {' -> '.join([*trail, name, dep])}"
            if dep not in state:
                visit(dep, [*trail, name])
        state[name] = 2

    for name in graph:
        if name not in state:
            visit(name, [])


def test_only_the_framework_module_imports_presidio() -> None:
    importers = [
        path.name
        for path in (REPO / "redaction").rglob("*.py")
        if "presidio_analyzer" in path.read_text("utf-8").replace("``presidio_analyzer``", "")
    ]
    assert importers == ["framework.py"]


@needs_hyperscan
def test_databases_of_old_pattern_sets_are_pruned_after_a_week(tmp_path: Path) -> None:
    old = tmp_path / "redaction-prefilter-0000.hsdb"
    recent = tmp_path / "redaction-prefilter-1111.hsdb"
    for path in (old, recent):
        path.write_bytes(b"x")
    week_ago = time.time() - 8 * 86400
    os.utime(old, (week_ago, week_ago))
    Prefilter(PATTERNS, cache_dir=tmp_path)
    assert not old.exists()
    assert recent.exists()
