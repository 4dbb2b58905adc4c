"""The gitleaks rule set as presidio recognizers: one ``GitleaksRecognizer`` per rule.

The rules ship in ``redaction/data/gitleaks_rules.jsonl`` (MIT, see ``GITLEAKS-LICENSE``
there). Their regexes are Go RE2 syntax; :func:`to_python_regex` makes them Python ``re``
patterns, which Hyperscan also reads as prefilters. As in gitleaks, the secret is the
rule's ``secretGroup``, or the first group when that is 0, and must reach the rule's entropy.
"""

from __future__ import annotations

import json
import re
from functools import cache
from importlib import resources
from typing import Any

from redaction.framework import RecognizerResult
from redaction.recognizers.base import LogRecognizer
from redaction.recognizers.tokens import looks_secret

# Rules handled elsewhere: PEM blocks span lines (redaction.pem).
_SKIP = frozenset({"private-key"})
# A rule sees the three lines before a candidate line when its match may cross lines or
# its keyword may stand on an earlier line (``<xToken>`` on the line above the value).
_MULTILINE_HINT = re.compile(r"\\s|\[\\r\\n\]|\(\?s:|\\n")
_ERROR_BEFORE = re.compile(r"(?i)(?:error|exception|warning)[\"']?\s*[:=,]\s*[\"'`]?\s*$")
# gitleaks' end-of-secret guard; logs also end secrets with ``,`` ``)`` ``]`` ``}`` ``>`` ``|`` ``&``.
_TERMINATOR = "(?:[\\x60'\"\\s;]|\\\\[nr]|$)"
_LOG_TERMINATOR = "(?:[\\x60'\"\\s;]|\\\\[nr]|$|(?=[,)\\]}>|&]))"
# A placeholder of ours right before a value: ``<TOKEN_1>`` reads to the generic rule as
# the key word ``TOKEN`` and the operator ``>``, which would re-mask masked text.
_PLACEHOLDER_BEFORE = re.compile(r"<[A-Z][A-Z0-9_]*_[0-9]+>[\s'\"`=]*$")
_POSIX_CLASSES = {"[:alnum:]": "A-Za-z0-9", "[:alpha:]": "A-Za-z", "[:digit:]": "0-9"}


def to_python_regex(go_regex: str) -> tuple[str, int]:
    """Convert a gitleaks (Go RE2) regex to a Python pattern and flags.

    A ``(?i)`` that is not at the start (legal in Go, an error in Python) becomes
    case-insensitivity for the whole pattern: a superset of the Go match, which errs
    towards masking. The end-of-secret guard also accepts the punctuation that ends
    values in log lines (``token=X)``, ``[X, Y]``).
    """
    flags = 0
    regex = go_regex
    if regex.startswith("(?i)"):
        regex, flags = regex[4:], re.IGNORECASE
    if "(?i)" in regex:
        regex, flags = regex.replace("(?i)", ""), re.IGNORECASE
    regex = regex.replace("\\z", "\\Z").replace(_TERMINATOR, _LOG_TERMINATOR)
    for posix, ascii_class in _POSIX_CLASSES.items():
        regex = regex.replace(posix, ascii_class)
    return regex, flags


class GitleaksRecognizer(LogRecognizer):
    """One gitleaks rule: its regex, secret group, entropy floor and keywords."""

    ENTITY = "TOKEN"

    def __init__(self, rule: dict[str, Any]) -> None:
        regex, flags = to_python_regex(rule["regex"])
        generic = rule["rule"].startswith("generic")
        super().__init__(
            name=f"gitleaks:{rule['rule']}",
            patterns=[(rule["rule"], regex, 0.5 if generic else 0.85)],
            prefilter=[regex],
            prefilter_caseless=bool(flags & re.IGNORECASE),
            min_entropy=rule.get("entropy") or 0.0,
            flags=flags,
            window=3 if rule.get("keywords") or _MULTILINE_HINT.search(rule["regex"]) else 0,
        )
        self.rule_id = rule["rule"]
        self.generic = generic
        self.secret_group = rule.get("secretGroup") or 0
        self.keywords = tuple(k.lower() for k in rule.get("keywords") or ())

    def analyze(
        self,
        text: str,
        entities: list[str] | None = None,
        nlp_artifacts: object = None,
        regex_flags: int | None = None,
    ) -> list[RecognizerResult]:
        """Run the rule where one of its keywords occurs (gitleaks' own gate), else find nothing."""
        if self.keywords:
            lowered = text.lower()
            if not any(keyword in lowered for keyword in self.keywords):
                return []
        return super().analyze(text, entities, nlp_artifacts, regex_flags)

    def spans(self, match: re.Match[str], groups: list[tuple[str, str]]) -> list[tuple[tuple[int, int], str]]:
        """Mask the rule's secret group (gitleaks: group 1 when ``secretGroup`` is 0).

        Rules whose groups are named mark alternatives, not the secret: mask the whole match.
        """
        if match.re.groupindex:
            return [(match.span(), self.entity)]
        group = self.secret_group or next((i for i in range(1, match.re.groups + 1) if match.group(i)), 0)
        if group and match.group(group) is None:
            group = 0
        return [(match.span(group), self.entity)]

    def invalidate_context(self, text: str, start: int, end: int, entity: str) -> bool:
        """Generic rules: a value after ``KeyError:`` is a name; one after a placeholder is masked text."""
        before = text[max(0, start - 40) : start]
        return self.generic and bool(_ERROR_BEFORE.search(before) or _PLACEHOLDER_BEFORE.search(before))

    def validate_result(self, pattern_text: str) -> bool | None:
        """Apply the rule's entropy floor; generic rules must also read like a credential."""
        if self.generic and not looks_secret(pattern_text.strip("\"'`")):
            return False
        return super().validate_result(pattern_text)


@cache
def load_rules() -> tuple[dict[str, Any], ...]:
    """Read the shipped gitleaks rules."""
    text = resources.files("redaction.data").joinpath("gitleaks_rules.jsonl").read_text("utf-8")
    return tuple(json.loads(line) for line in text.splitlines() if line.strip())


def gitleaks_recognizers() -> list[GitleaksRecognizer]:
    """Return one recognizer per shipped gitleaks rule."""
    return [GitleaksRecognizer(rule) for rule in load_rules() if rule["rule"] not in _SKIP]
