"""Launcher prefixes on every line of a multi-node log: pdsh/srun ``node07: ...``, NCCL ``node-17:3121:3121 [0]``."""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Callable

from redaction.recognizers.base import LogRecognizer
from redaction.recognizers.hosts import NODE_RE, is_node_name

# how many lines a digit-less name must start before it is taken for a pdsh/DeepSpeed host prefix
PREFIX_REPEATS = 5
# mpirun --tag-output puts its own tag first: "[1,2]<stdout>:gpu-dgx-a7:51235:51235 [2] NCCL ..."
_MPI_TAG = r"(?:\[[0-9]+,[0-9]+\]<std(?:out|err)>:)?"
# Ascend CANN's error codes start their message lines ("EJ0001: ...", "EE9999: Inner Error!"): E, a category letter,
# four digits, in capitals; host prefixes from hostfiles and Slurm are lower case
_CANN_ERROR_CODE = re.compile(r"E[A-Z][0-9]{4}")


class LinePrefixRecognizer(LogRecognizer):
    """Launcher prefixes on every line: pdsh/srun ``node07: ...``, NCCL ``node-17:3121:3121 [0]``.

    In a multi-node log these start nearly every line, so instead of going through the
    prefilter the redactor hands the lines between candidates to :meth:`sub_block`, one
    regex pass each.
    """

    ENTITY = "HOST"
    PATTERNS = (("line prefix", rf"^{_MPI_TAG}(?P<HOST>{NODE_RE})(?=:[ \t]|:[0-9]+:[0-9]+[ \t])", 0.95),)
    BLOCK_LEVEL = True
    # Every line :meth:`sub_block` can change starts like this (a superset, for the prefilter's one pass).
    BLOCK_PREFILTER = rf"^{_MPI_TAG}[A-Za-z][A-Za-z0-9-]*(?::[ \t]|:[0-9]+:[0-9]+[ \t])"
    # Each line is matched with the newline before it: a literal start lets ``re`` skip ahead
    # to line starts instead of trying every position (5x faster than ``^`` with MULTILINE).
    _REPEATED_RE = re.compile(rb"\n([a-z][a-z0-9]*(?:-[a-z0-9]+)+): ")
    _BLOCK_RE = re.compile(rf"\n({_MPI_TAG})(?=[A-Za-z][A-Za-z0-9-]*+:)({NODE_RE})(?=:[ \t]|:[0-9]+:[0-9]+[ \t])".encode())

    def sub_block(self, data: bytes, replace: Callable[[bytes], bytes]) -> bytes:
        """Replace the launcher prefix of every line in ``data`` (which starts at a line start)."""
        if b":" not in data:
            return data
        masked, found = self._BLOCK_RE.subn(lambda m: b"\n" + m.group(1) + replace(m.group(2)), b"\n" + data)
        masked, named = self._sub_repeated(masked if found else b"\n" + data, replace)
        return masked[1:] if found or named else data

    def _sub_repeated(self, data: bytes, replace: Callable[[bytes], bytes]) -> tuple[bytes, int]:
        """Hosts without digits (``gpu-node-a: ``) count as a launcher prefix when they start many lines."""
        counts = Counter(self._REPEATED_RE.findall(data))
        hosts = {name for name, n in counts.items() if n >= PREFIX_REPEATS and is_node_name(name.decode())}
        if not hosts:
            return data, 0
        return self._REPEATED_RE.subn(lambda m: b"\n" + (replace(m.group(1)) if m.group(1) in hosts else m.group(1)) + b": ", data)

    def invalidate_result(self, pattern_text: str) -> bool | None:
        """Drop names of node shape that are ranks, devices, dtypes, versions or CANN error codes."""
        return not is_node_name(pattern_text) or _CANN_ERROR_CODE.fullmatch(pattern_text) is not None
