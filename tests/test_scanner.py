"""The line scanner: right (line, pattern) pairs, and safe when threads share one Scanner."""

from __future__ import annotations

import re
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

from diagnose.encyclopedia.entries import load_entries
from diagnose.engine.signatures import SignatureRules
from diagnose.parse.scanner import Scanner
from diagnose.parse.structural import EXAMPLES, STRUCTURAL

PATTERNS = [r"CUDA out of memory", r"Watchdog caught collective operation timeout", r"\bNaN\b"]


def _text(n: int) -> str:
    lines = []
    for i in range(n):
        lines.append(f"step {i} loss 1.0")
        if i % 97 == 0:
            lines.append("[rank3]: torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB")
        if i % 89 == 0:
            lines.append("[rank1]: Watchdog caught collective operation timeout: WorkNCCL(SeqNum=7)")
    return "\n".join(lines)


def test_scan_finds_each_matching_line_and_pattern() -> None:
    scanner = Scanner(PATTERNS)
    text = "ok\nCUDA out of memory here\nloss is NaN\nok"
    assert scanner.scan(text) == [(1, 0), (2, 2)]


def test_threads_sharing_a_scanner_get_the_same_answers() -> None:
    scanner = Scanner(PATTERNS)
    texts = [_text(2000 + 37 * i) for i in range(16)]
    expected = [scanner.scan(t) for t in texts]
    with ThreadPoolExecutor(max_workers=8) as pool:
        got = list(pool.map(scanner.scan, texts * 4))
    assert got == expected * 4
    assert all(found for found in got)


FILLER = "x" * 120
# hyperscan misses these lines (reproduced with python-hyperscan 0.9.1); Python's re matches each
MISSED_ALONE = (r"^.*\]\s*memory: usage \d+kB", "Aug  3 10:31:24 compute4 kernel: [5490487.294600] memory: usage 2097152kB, limit")
NON_ASCII_CLASS = (r"unable to resolve host address ['‘\"]?[\w.-]*huggingface\.co", "wget: unable to resolve host address ‘huggingface.co’")
LAGGING = (
    r"\[[\d, ]+\] finished collective #\d+, but didn't join collective #\d+",
    "   [7] finished collective #182, but didn't join collective #183",
)
HIDES_LAGGING = (
    r"\[\d+\]: query input tensor does not match the required shape",
    "[6]: query input tensor does not match the required shape",
)


@pytest.mark.parametrize("cases", [[MISSED_ALONE], [NON_ASCII_CLASS], [LAGGING, HIDES_LAGGING]])
def test_a_pattern_is_never_lost_on_its_own_example(cases: list[tuple[str, str]]) -> None:
    scanner = Scanner([pattern for pattern, _ in cases], examples=[[example] for _, example in cases])
    for index, (_, example) in enumerate(cases):
        lines = [FILLER, example]
        assert (1, index) in scanner.scan("\n".join(lines), lines)


def _readers_scanner() -> tuple[list[str], list[list[str]], Scanner]:
    """The patterns, their examples and the scanner the reader builds from them: structural events and every signature."""
    rules = SignatureRules(load_entries())
    patterns = list(STRUCTURAL.values()) + rules.patterns
    examples = [*EXAMPLES, *rules.examples]
    return patterns, examples, Scanner(patterns, examples=examples)


def test_every_encyclopedia_example_is_found_by_the_scanner_the_reader_builds() -> None:
    patterns, examples, scanner = _readers_scanner()
    lines: list[str] = []
    expected: list[tuple[int, int]] = []
    for index, lines_of_pattern in enumerate(examples):
        for example in lines_of_pattern:
            lines += [FILLER, example]
            expected.append((len(lines) - 1, index))
    found = set(scanner.scan("\n".join(lines), lines))
    assert len(expected) > 1000
    assert [(lines[line], patterns[index]) for line, index in expected if (line, index) not in found] == []


def test_every_encyclopedia_pattern_runs_in_hyperscan() -> None:
    """A pattern Hyperscan cannot run (a backreference, a non-ASCII class) is searched with re over every chunk: one such
    signature made `diagnose log` 2.7x slower on a 200 MB log. Equalities belong in a signature's ``exclude``."""
    pytest.importorskip("hyperscan")
    patterns, _, scanner = _readers_scanner()
    assert [patterns[index] for index in sorted(scanner._python_only)] == []


def test_the_scanner_proposes_every_line_a_pattern_matches_across_the_synthetic_suite() -> None:
    # hyperscan's misses depend on the other patterns and on where a line starts: compare with re on every line
    patterns, _, scanner = _readers_scanner()
    regexes = [re.compile(pattern) for pattern in patterns]
    cases = Path(__file__).parent.parent / "evals" / "cases"
    logs = sorted(path for path in cases.rglob("*") if path.is_file() and path.suffix in (".txt", ".log"))
    assert len(logs) >= 96
    lost = []
    for log in logs:
        lines = log.read_text(encoding="utf-8", errors="replace").split("\n")
        found = set(scanner.scan("\n".join(lines), lines))
        lost += [
            (log.parent.name, i) for i, line in enumerate(lines) for j, rx in enumerate(regexes) if (i, j) not in found and rx.search(line)
        ]
    assert lost == []
