r"""Find which lines of a chunk match which of many regexes, in one pass.

Most lines of a training log match nothing, so the scan runs over the whole
chunk at once (hyperscan when installed, else one ``re`` pass per pattern) and
each candidate line is then confirmed with Python's ``re`` on that line alone.

Hyperscan only proposes candidates, so a line it fails to propose is lost. It does fail: some patterns never
match lines Python's ``re`` matches (``^.*\]\s*memory: usage`` on a syslog line), a character class with a
non-ASCII character is read byte by byte, and adding one pattern to a database can hide another's match from a
line that follows a long one. So each pattern's known lines (an encyclopedia signature's ``examples``) are scanned
with the database, each after a long filler line, when it is compiled: a pattern that misses one of its own
examples is scanned with ``re`` instead.
"""

from __future__ import annotations

import bisect
import hashlib
import json
import re
import threading
from collections.abc import Sequence
from pathlib import Path
from typing import Any

_CACHE: dict[str, tuple[Any, list[int]]] = {}
# conditionals, backreferences and lookbehind: hyperscan rejects them, so skip the compile attempt
_BEYOND_HYPERSCAN = re.compile(r"\(\?\(|\\[1-9]|\(\?<[=!]")


class Scanner:
    """Multi-pattern line scanner: ``scan(text)`` -> sorted ``(line_index, pattern_index)`` pairs."""

    def __init__(self, patterns: Sequence[str], cache_dir: Path | None = None, examples: Sequence[Sequence[str]] = ()) -> None:
        """``examples[i]``: lines pattern ``i`` must find (an encyclopedia signature's examples); none for the rest."""
        self.patterns = list(patterns)
        self._regexes: dict[int, re.Pattern[str]] = {}  # compiled on first use: most patterns never match a given log
        self._hs_db, self._python_only = _compile_hyperscan(self.patterns, cache_dir, [list(e) for e in examples])
        self._scratches = threading.local()
        self._chunk_regexes = {i: re.compile(self.patterns[i], re.M) for i in self._python_only}

    def scan(self, text: str, lines: list[str] | None = None) -> list[tuple[int, int]]:
        """All (line index within text, pattern index) pairs where the pattern matches that line.

        ``lines`` is ``text.split("\\n")`` when the caller has it already.
        """
        candidates: set[tuple[int, int]] = set()
        if self._hs_db is not None:
            candidates = _hyperscan_lines(self._hs_db, text.encode("utf-8", errors="replace"), self._scratch())
        if self._chunk_regexes:
            char_starts: list[int] | None = None
            for index, regex in self._chunk_regexes.items():
                for match in regex.finditer(text):
                    char_starts = char_starts or _line_starts(text)
                    candidates.add((bisect.bisect_right(char_starts, match.start()) - 1, index))
        if not candidates:
            return []
        lines = lines if lines is not None else text.split("\n")
        return [
            (line_index, pattern_index)
            for line_index, pattern_index in sorted(candidates)
            if self._regex(pattern_index).search(lines[line_index])
        ]

    def _regex(self, index: int) -> re.Pattern[str]:
        """Pattern ``index`` compiled for confirming a candidate line."""
        regex = self._regexes.get(index)
        if regex is None:
            regex = self._regexes[index] = re.compile(self.patterns[index])
        return regex

    def _scratch(self) -> Any:
        """This thread's hyperscan scratch: a scratch serves one scan at a time, so threads never share one."""
        scratch = getattr(self._scratches, "scratch", None)
        if scratch is None:
            import hyperscan

            scratch = self._scratches.scratch = hyperscan.Scratch(self._hs_db)
        return scratch


def _hyperscan_lines(database: Any, data: bytes, scratch: Any = None) -> set[tuple[int, int]]:
    """(line index, pattern id) of every match the database reports in ``data``, by the line its match ends on."""
    ends: list[tuple[int, int]] = []

    def on_match(pattern_id: int, start: int, end: int, flags: int, context: object) -> None:
        ends.append((pattern_id, end))

    database.scan(data, match_event_handler=on_match, scratch=scratch)
    starts = _line_starts(data) if ends else []
    return {(bisect.bisect_right(starts, max(end - 1, 0)) - 1, pattern_id) for pattern_id, end in ends}


def _line_starts(text: str | bytes) -> list[int]:
    newline = "\n" if isinstance(text, str) else b"\n"
    starts = [0]
    find = text.find
    position = find(newline)  # type: ignore[arg-type]
    while position >= 0:
        starts.append(position + 1)
        position = find(newline, position + 1)  # type: ignore[arg-type]
    return starts


def _compile_hyperscan(patterns: list[str], cache_dir: Path | None, examples: list[list[str]]) -> tuple[Any, list[int]]:
    """A hyperscan database of the patterns it accepts and finds its examples with, and the indexes of the others.

    Compiling takes about a second, so the result is kept in memory and, serialised, in ``cache_dir``.
    """
    try:
        import hyperscan
    except ImportError:
        return None, list(range(len(patterns)))
    key = hashlib.sha256(json.dumps([patterns, examples]).encode()).hexdigest()[:16]
    if key in _CACHE:
        return _CACHE[key]
    cached = _load(cache_dir, key) if cache_dir else None
    if cached is not None:
        _CACHE[key] = cached
        return cached
    flags = hyperscan.HS_FLAG_MULTILINE | hyperscan.HS_FLAG_PREFILTER

    def compiled(indexes: list[int]) -> Any:
        database = hyperscan.Database()
        database.compile(
            expressions=[_hs_pattern(patterns[i]) for i in indexes], ids=indexes, elements=len(indexes), flags=[flags] * len(indexes)
        )
        return database

    rejected = [i for i, p in enumerate(patterns) if _BEYOND_HYPERSCAN.search(p)]
    accepted = [i for i in range(len(patterns)) if i not in rejected]
    try:
        database: Any = compiled(accepted)
    except Exception:  # some pattern is beyond hyperscan: find which, one by one
        accepted, rejected = [], []
        for index in range(len(patterns)):
            try:
                compiled([index])
                accepted.append(index)
            except Exception:
                rejected.append(index)
        database = compiled(accepted) if accepted else None
    for _ in range(SELF_CHECK_ROUNDS):  # a pattern removed can change what the others find: check again
        missing = _missed_examples(database, patterns, examples, accepted) if database is not None else set()
        if not missing:
            break
        accepted = [i for i in accepted if i not in missing]
        rejected = sorted([*rejected, *missing])
        database = compiled(accepted) if accepted else None
    _CACHE[key] = (database, rejected)
    if cache_dir is not None and database is not None:
        _save(cache_dir, key, database, rejected)
    return database, rejected


SELF_CHECK_ROUNDS = 3
FILLER = "x" * 120
"""Put before each example: hyperscan's misses depend on where in the data a line starts."""


def _missed_examples(database: Any, patterns: list[str], examples: list[list[str]], accepted: list[int]) -> set[int]:
    """The accepted patterns the database fails to find on one of their own examples (that ``re`` matches)."""
    lines: list[str] = []
    expected: list[tuple[int, int]] = []
    for index in accepted:
        for example in examples[index] if index < len(examples) else []:
            if "\n" not in example and re.search(patterns[index], example):
                lines += [FILLER, example]
                expected.append((len(lines) - 1, index))
    if not expected:
        return set()
    found = _hyperscan_lines(database, "\n".join(lines).encode("utf-8", errors="replace"))
    return {index for line, index in expected if (line, index) not in found}


def _load(cache_dir: Path, key: str) -> tuple[Any, list[int]] | None:
    import hyperscan

    path = cache_dir / f"scan-{key}.hsdb"
    try:
        data = path.read_bytes()
        rejected = json.loads(path.with_suffix(".json").read_text())
        return hyperscan.loadb(data, hyperscan.HS_MODE_BLOCK), rejected
    except (OSError, ValueError, hyperscan.error):
        return None


def _save(cache_dir: Path, key: str, database: Any, rejected: list[int]) -> None:
    import hyperscan

    try:
        cache_dir.mkdir(parents=True, exist_ok=True)
        path = cache_dir / f"scan-{key}.hsdb"
        path.with_suffix(".json").write_text(json.dumps(rejected))
        tmp = path.with_suffix(".tmp")
        tmp.write_bytes(hyperscan.dumpb(database))
        tmp.replace(path)
    except OSError:
        return  # a read-only cache only costs the compile time next run


def _hs_pattern(pattern: str) -> bytes:
    # Named groups are Python syntax; hyperscan (PCRE) wants plain groups.
    return re.sub(r"\(\?P<\w+>", "(", pattern).encode("utf-8")
