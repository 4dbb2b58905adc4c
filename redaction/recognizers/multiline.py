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


_B64_VALUE = re.compile(r"^(?:[A-Za-z0-9+/]{4})+(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?$")


class KubeSecretDataRecognizer(LogRecognizer):
    """Base64 values under a Kubernetes ``data:`` block (``kind: Secret`` manifests printed in logs)."""

    ENTITY = "TOKEN"
    WINDOW = 4
    PATTERNS = (
        (
            "secret data",
            r"(?<![\w-])(?:data|stringData):[ \t]*\r?\n(?:[^\n]*\n){0,3}?[ \t]+[\w.-]+:[ \t]*(?:[|>][-+]?[ \t]*\r?\n[ \t]+)?[\"']?"
            r"(?P<TOKEN>[A-Za-z0-9+/]{8,}={0,2})[\"']?[ \t]*$",
            0.7,
        ),
    )
    FLAGS = re.MULTILINE
    PREFILTER = (
        r"(?:data|stringData):[ \t]*\r?\n(?:[^\n]*\n){0,3}[ \t]+[\w.-]+:[ \t]*(?:[|>][-+]?[ \t]*\r?\n[ \t]+)?[\"']?[A-Za-z0-9+/]{8,}",
    )

    def validate_result(self, pattern_text: str) -> bool | None:
        """Accept only well-formed base64 that is not a plain word (``/data/train`` has a slash but no case mix)."""
        if not _B64_VALUE.match(pattern_text):
            return False
        mixed = any(c.isupper() for c in pattern_text) and any(c.islower() for c in pattern_text)
        return None if mixed and (pattern_text.endswith("=") or any(c.isdigit() for c in pattern_text)) else False
