"""The line scanner: right (line, pattern) pairs, and safe when threads share one Scanner."""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor

from diagnose.parse.scanner import Scanner

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
