"""The layout's rules, checked: which stage may import which, no import cycles, the public API, module sizes.

Imports are read from the source (``ast``), lazy ones inside functions included, so a cycle hidden
behind a function-level import is still a cycle. Imports under ``if TYPE_CHECKING:`` are type-only:
they count for the layer rules, not for cycles.
"""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

import pytest

import diagnose

REPO = Path(__file__).resolve().parents[1]
PACKAGES = ("diagnose", "redaction")
MAX_MODULE_LINES = 300


def _module_name(path: Path) -> str:
    parts = path.relative_to(REPO).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _modules() -> dict[str, Path]:
    return {_module_name(p): p for package in PACKAGES for p in sorted((REPO / package).rglob("*.py"))}


def _is_type_checking(node: ast.If) -> bool:
    test = node.test
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING")


def _imports(path: Path, known: set[str]) -> list[tuple[str, bool]]:
    """(imported module, type-only) for every import statement in the file."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    type_only: set[int] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.If) and _is_type_checking(node):
            type_only.update(id(child) for stmt in node.body for child in ast.walk(stmt))
    found: list[tuple[str, bool]] = []
    for node in ast.walk(tree):
        names: list[str] = []
        if isinstance(node, ast.Import):
            names = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            names = [f"{node.module}.{alias.name}" if f"{node.module}.{alias.name}" in known else node.module for alias in node.names]
        found += [(name, id(node) in type_only) for name in names if name.split(".")[0] in PACKAGES]
    return found


def _graph(*, with_type_only: bool) -> dict[str, set[str]]:
    modules = _modules()
    known = set(modules)
    return {
        name: {target for target, type_only in _imports(path, known) if with_type_only or not type_only} for name, path in modules.items()
    }


def _within(module: str, package: str) -> bool:
    return module == package or module.startswith(package + ".")


@pytest.mark.parametrize(
    ("importer", "forbidden"),
    [
        ("diagnose.parse", "diagnose.engine"),
        ("diagnose.parse", "diagnose.llm"),
        ("diagnose.parse", "diagnose.chat"),
        ("diagnose.engine", "diagnose.llm"),
        ("diagnose.engine", "diagnose.chat"),
        ("diagnose.encyclopedia", "diagnose.engine"),
        ("diagnose.chat", "diagnose.llm"),
        ("redaction", "diagnose"),
    ],
)
def test_a_stage_never_imports_a_later_one(importer: str, forbidden: str) -> None:
    offenders = [
        f"{module} imports {target}"
        for module, targets in _graph(with_type_only=True).items()
        if _within(module, importer)
        for target in targets
        if _within(target, forbidden)
    ]
    assert not offenders


def test_nothing_imports_the_interfaces() -> None:
    """cli and web drive the product: only ``python -m diagnose`` imports the CLI, only its serve command the web app."""
    offenders = []
    for module, targets in _graph(with_type_only=True).items():
        for target in targets:
            if _within(target, "diagnose.cli") and not (_within(module, "diagnose.cli") or module == "diagnose.__main__"):
                offenders.append(f"{module} imports {target}")
            if _within(target, "diagnose.web") and not (_within(module, "diagnose.web") or module == "diagnose.cli.serve"):
                offenders.append(f"{module} imports {target}")
    assert not offenders


def _cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """Strongly connected components with more than one module (Tarjan)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []

    def visit(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        on_stack.add(node)
        for target in graph.get(node, ()):
            if target not in graph:
                continue
            if target not in index:
                visit(target)
                low[node] = min(low[node], low[target])
            elif target in on_stack:
                low[node] = min(low[node], index[target])
        if low[node] == index[node]:
            component = []
            while True:
                member = stack.pop()
                on_stack.discard(member)
                component.append(member)
                if member == node:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    for node in sorted(graph):
        if node not in index:
            visit(node)
    return found


def test_no_import_cycle_lazy_or_not() -> None:
    assert _cycles(_graph(with_type_only=False)) == []


def test_the_cycle_finder_finds_a_cycle() -> None:
    assert _cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]


def test_no_module_is_a_monolith() -> None:
    sizes = {name: len(path.read_text(encoding="utf-8").splitlines()) for name, path in _modules().items()}
    assert {name: n for name, n in sizes.items() if n > MAX_MODULE_LINES} == {}


def test_the_public_api_is_pinned() -> None:
    assert diagnose.__all__ == ["Diagnosis", "Result", "__version__", "diagnose"]
    for name in diagnose.__all__:
        assert getattr(diagnose, name) is not None
    assert diagnose.Diagnosis.__module__ == "diagnose.schema"
    assert diagnose.__version__.count(".") >= 2


def test_importing_the_package_loads_no_heavy_dependency() -> None:
    code = (
        "import sys, diagnose\n"
        "heavy = [m for m in ('presidio_analyzer', 'chromadb', 'litellm', 'fastapi', 'diagnose.pipeline') if m in sys.modules]\n"
        "print(','.join(heavy))"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=REPO, check=True)
    assert done.stdout.strip() == ""


def test_the_public_diagnose_takes_paths(tmp_path: Path) -> None:
    log = tmp_path / "train.log"
    log.write_text(
        "[rank1]: torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB. "
        "GPU 1 has a total capacity of 79.15 GiB of which 1.06 GiB is free.\n",
        encoding="utf-8",
    )
    result = diagnose.diagnose([log])
    assert result.diagnosis.root_cause.id == "cuda-oom"
    assert result.diagnosis.initiating_rank == 1
