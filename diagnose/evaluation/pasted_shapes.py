"""How the same log reaches a user: the shapes terminals and log shippers give it (used to check robustness).

A terminal hard-wraps long lines and colours error words; Windows adds CRLF; ``kubectl logs --timestamps``, GitHub
Actions and a node's CRI container log file put a time (and for CRI the stream) before every line; ``kubectl logs
--prefix`` names the pod; a log pasted into an issue's quote gets ``> `` on every line. None of these changes what
failed, so none may change the diagnosis.
``bench/bench_robustness.py`` measures the whole dev split under each; ``tests/engine/test_log_shippers.py``
asserts it per case for the shippers.
"""

from __future__ import annotations

import re
from collections.abc import Callable

from diagnose.parse.ingest import as_displayed

Shape = Callable[[str], str]


def hard_wrap(width: int) -> Shape:
    """A terminal's hard wrap of what it shows (a copy from it holds no colour codes and only a progress bar's last
    update): each line cut into pieces of exactly ``width`` columns."""

    def wrap(text: str) -> str:
        out: list[str] = []
        for line in as_displayed(text).split("\n"):
            while len(line) > width:
                out.append(line[:width])
                line = line[width:]
            out.append(line)
        return "\n".join(out)

    return wrap


def each_line(prefix: Callable[[int], str]) -> Shape:
    """Every line behind ``prefix(index)``."""
    return lambda text: "\n".join(prefix(i) + line for i, line in enumerate(text.split("\n")))


def _clock(i: int) -> str:
    return f"{i // 3600 % 24:02d}:{i // 60 % 60:02d}:{i % 60:02d}"


SHIPPERS: dict[str, Shape] = {
    "crlf": lambda text: text.replace("\n", "\r\n"),
    "kubectl-prefix": each_line(lambda i: "[pod/trainer-0/pytorch] "),
    "markdown-quote": each_line(lambda i: "> "),
}
"""Shippers that add no time, and the quote marker of a log pasted into Markdown or an e-mail: every log may take them."""

TIMESTAMPING: dict[str, Shape] = {
    "kubectl-timestamps": each_line(lambda i: f"2025-05-01T{_clock(i)}.{i:09d}Z "),
    "github-actions": each_line(lambda i: f"2024-05-01T{_clock(i)}.1234567Z "),
    "cri": each_line(lambda i: f"2024-05-01T{_clock(i)}.123456789Z stderr F "),
}
"""Shippers that put a time before every line (one second apart): only for logs with no times of their own, whose
made-up times would otherwise contradict the log's."""

TERMINALS: dict[str, Shape] = {
    "wrap80": hard_wrap(80),
    "wrap120": hard_wrap(120),
    "ansi": lambda text: re.sub(r"\b(Error|ERROR|WARN|FAILED)\b", "\x1b[31m\\1\x1b[0m", text),
}
"""What a terminal does to the text a user copies from it."""
