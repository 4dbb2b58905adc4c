"""Credentials whose key and value stand on different lines (Kubernetes specs, YAML lists).

These recognizers see the lines before the candidate line (``WINDOW``); each line may carry a
launcher prefix, so the patterns look for their key words anywhere on a line.
"""

from __future__ import annotations

import re

from redaction.recognizers.base import LogRecognizer
from redaction.recognizers.credentials import SUFFIX, VALUE, is_value


class SplitSecretRecognizer(LogRecognizer):
    """A key named on one line, its value on a following one (multi-line YAML and Kubernetes specs).

    ``- name: WANDB_API_KEY`` then ``value: <key>``; ``credentials:`` then ``- <token>``. Each line
    may carry a launcher prefix, so the patterns look for the key words anywhere on their line.
    """

    ENTITY = "TOKEN"
    WINDOW = 4
    PATTERNS = (
        (
            "k8s env",
            rf"(?i)-\s+name:\s*[\"']?[A-Za-z0-9_]*(?:{SUFFIX}|API_?KEY)[\"']?[ \t]*\r?\n[^\n]*?\bvalue:[ \t]*[\"']?(?P<TOKEN>{VALUE}+)",
            0.75,
        ),
        (
            "yaml list",
            r"(?i)(?<![\w-])(?:credentials|secrets|passwords|api_keys|tokens|auth_tokens)\s*:[ \t]*\r?\n"
            rf"(?:[^\n]*-[ \t]+[^\n]*\n){{0,3}}[^\n]*?-[ \t]+[\"']?(?P<TOKEN>{VALUE}{{6,}})",
            0.7,
        ),
    )
    PREFILTER = (
        rf"(?i)name:\s*[\"']?[A-Za-z0-9_]*(?:{SUFFIX}|API_?KEY)[\"']?[ \t]*\r?\n[^\n]*value:",
        r"(?i)(?:credentials|secrets|passwords|api_keys|tokens|auth_tokens)\s*:[ \t]*\r?\n[^\n]*-[ \t]",
    )

    def invalidate_result(self, pattern_text: str) -> bool | None:
        """Keep references (``valueFrom``-style placeholders, ``${VAR}``)."""
        return not is_value(pattern_text)


RANDOM_CASE = (0.3, 0.7)
"""Share of capitals among the letters of a random base64 value (half, give or take) that marks it without a digit."""
_B64_VALUE = re.compile(r"^(?:[A-Za-z0-9+/]{4})+(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?$")


class KubeSecretDataRecognizer(LogRecognizer):
    """Base64 values under a Kubernetes ``data:`` block (``kind: Secret`` manifests printed in logs).

    Every key of the block is a secret, however many there are: the candidate is any indented ``key: <base64>``
    line (or a block scalar's first line), and the match must run from a ``data:`` header above it, through indented
    lines only (two spaces at least, behind any launcher prefix), to the end of the candidate line. The prefilter
    is one line long, so Hyperscan (which reports every match end) and Python's regexes (which report
    non-overlapping matches) pick the same candidate lines.
    """

    ENTITY = "TOKEN"
    WINDOW = 24
    """A ``data:`` block of up to this many lines above its key (a Secret rarely holds more keys)."""
    PATTERNS = (
        (
            "secret data",
            rf"(?<![\w-])(?:data|stringData):[ \t]*\r?\n(?:[^\n]*?  [^\n]*\n){{0,{WINDOW - 1}}}[^\n]*?  [\w.-]+:[ \t]*"
            r"(?:[|>][-+]?[ \t]*\r?\n[^\n]*?  )?[\"']?(?P<TOKEN>[A-Za-z0-9+/]{8,}={0,2})[\"']?[ \t]*\r?\Z",
            0.7,
        ),
    )
    PREFILTER = (
        r"  [\w.-]+:[ \t]*[\"']?[A-Za-z0-9+/]{8,}={0,2}[\"']?[ \t]*\r?$",
        r"  [\w.-]+:[ \t]*[|>][-+]?[ \t]*\r?\n[^\n]*?  [A-Za-z0-9+/]{8,}",
    )

    def validate_result(self, pattern_text: str) -> bool | None:
        """Accept only well-formed base64 that is not a plain word (``/data/train`` has a slash but no case mix): mixed
        case with a digit, padding or a ``+``/``/``, or with capitals spread as in random text (about half the letters;
        a CamelCase name such as ``ImageNetDatasetV`` has a few)."""
        if not _B64_VALUE.match(pattern_text):
            return False
        letters = [c for c in pattern_text if c.isalpha()]
        upper = sum(c.isupper() for c in letters)
        if not 0 < upper < len(letters):
            return False
        marked = pattern_text.endswith("=") or any(c.isdigit() or c in "+/" for c in pattern_text)
        return None if marked or RANDOM_CASE[0] <= upper / len(letters) <= RANDOM_CASE[1] else False
