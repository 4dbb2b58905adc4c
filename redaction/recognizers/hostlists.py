"""Host names in lists and tables: launcher host lists, DeepSpeed world-info dicts, syslog host fields."""

from __future__ import annotations

import re

from redaction.recognizers.base import LogRecognizer
from redaction.recognizers.hosts import is_node_name
from redaction.recognizers.names import is_public_domain

_NAME = r"[A-Za-z0-9][A-Za-z0-9_.-]*"
_ITEM = re.compile(rf"({_NAME})(?::[0-9]+)?")
_KEY = re.compile(rf"['\"]({_NAME})['\"]\s*:")


class HostListRecognizer(LogRecognizer):
    """``pdsh -w a,b``, ``mpirun -H a:8,b:8``, ``srun -w a,b``, DeepSpeed's workers and world-info dicts, syslog hosts."""

    ENTITY = "HOST"
    FLAGS = re.MULTILINE
    PATTERNS = (
        (
            "launcher list",
            rf"(?:following workers:|\bpdsh\b[^|;\n]*?\s-w|\bmpirun\b[^|;\n]*?\s(?:-H|--host|-host)|"
            rf"\bsrun\b[^|;\n]*?\s(?:-w|--nodelist[= ]))\s*(?P<list>{_NAME}(?::[0-9]+)?(?:,{_NAME}(?::[0-9]+)?)*)",
            0.7,
        ),
        ("world info", r"(?:WORLD INFO DICT|global_rank_mapping=[^{\n]*|world_info=?)\s*:?\s*\{(?P<dict>[^}\n]*)\}", 0.7),
        (
            "syslog",
            rf"^(?:[A-Z][a-z]{{2}} [ 0-9][0-9] [0-9]{{2}}:[0-9]{{2}}:[0-9]{{2}}) (?P<one>{_NAME}) [\w./-]+(?:\[[0-9]+\])?: ",
            0.7,
        ),
    )
    PREFILTER = (
        r"following workers:",
        r"\bpdsh\b[^\n]*\s-w",
        r"\bmpirun\b[^\n]*\s(?:-H|--host|-host)",
        r"\bsrun\b[^\n]*\s(?:-w|--nodelist)",
        r"WORLD INFO DICT|global_rank_mapping=|world_info",
        r"^[A-Z][a-z]{2} [ 0-9][0-9] [0-9]{2}:[0-9]{2}:[0-9]{2} [A-Za-z0-9]",
    )

    def spans(self, match: re.Match[str], groups: list[tuple[str, str]]) -> list[tuple[tuple[int, int], str]]:
        """Every host of the list (without ``:slots``), of the dict's keys, or the syslog host."""
        for name, finder in (("list", _ITEM), ("dict", _KEY), ("one", _ITEM)):
            if name in match.re.groupindex and match.group(name) is not None:
                if match.string[match.end(name) : match.end(name) + 1] == "[":
                    return []  # a SLURM node range, ``node[01-04]``: NodeNameRecognizer's, whole
                base = match.start(name)
                items = finder.finditer(match.group(name)) if name != "one" else [_ITEM.match(match.group(name))]
                return [
                    ((base + item.start(1), base + item.end(1)), self.entity)
                    for item in items
                    if item is not None and _is_host(item.group(1))
                ]
        return []


def _is_host(name: str) -> bool:
    """A name in a host position that can be a host (not ``localhost``, a rank, a GPU model or a public domain)."""
    return name.lower() not in {"localhost", "all", "none"} and is_node_name(name) and not is_public_domain(name)
