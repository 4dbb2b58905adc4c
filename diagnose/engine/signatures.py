"""Signature rules: the encyclopedia's signatures turned into findings on masked log lines.

The patterns live in kb/entries/*.md; this module only indexes them and builds
``Finding``s. A literal registry: ``SignatureRules(entries).rules`` lists every
(entry, signature) pair it applies. It is the reader's ``SignatureMatcher``: the reader scans
for ``patterns`` and asks ``finding`` about each line that matched.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import cache

from diagnose.encyclopedia.entries import Entry, Signature
from diagnose.parse.prefixes import anchored_on_body, body_of, interleaved_rank
from diagnose.schema import Finding, LogLine

ENVIRONMENT_ASSIGNMENT = re.compile(r"^\s*(?:export\s+)?[A-Z_][A-Z0-9_]*=(?!=)")
"""A line of an ``env`` / ``printenv`` dump or an echoed ``export``: a job script printing its configuration (NGC images set
``_CUDA_COMPAT_STATUS=...CUDA_ERROR_SYSTEM_DRIVER_MISMATCH`` on every healthy start), not something that happened."""


@cache
def _compiled(pattern: str) -> re.Pattern[str]:
    """A signature's regex, compiled once per process (only the few that match a log are ever needed)."""
    return re.compile(pattern)


@dataclass(frozen=True)
class Rule:
    """One signature of one entry."""

    entry_id: str
    signature: Signature
    collateral_only: bool


class SignatureRules:
    """Every signature of every entry, in a stable order (index = position in ``patterns``)."""

    def __init__(self, entries: list[Entry]) -> None:
        self.rules: list[Rule] = [
            Rule(entry.id, signature, entry.kind == "collateral") for entry in entries for signature in entry.signatures
        ]
        self.patterns: list[str] = [anchored_on_body(rule.signature.pattern) for rule in self.rules]
        self.examples: list[list[str]] = [list(rule.signature.examples) for rule in self.rules]
        """The lines each pattern must find, by the same index (the scanner checks its database with them)."""

    def finding(self, index: int, line: LogLine, order: int) -> Finding | None:
        """The finding for rule ``index`` on ``line`` (the scanner matched it); None when its exclusion applies."""
        rule = self.rules[index]
        if ENVIRONMENT_ASSIGNMENT.match(body_of(line.text)):
            return None
        if rule.signature.exclude_regex is not None and rule.signature.exclude_regex.search(line.text):
            return None
        match = _compiled(self.patterns[index]).search(line.text)
        named = match.groupdict().get("rank") if match else None
        if named is not None and named.isdigit():
            line = line.model_copy(update={"rank": int(named)})
        elif match is not None:
            interleaved = interleaved_rank(line.text, match.start())
            if interleaved is not None and interleaved != line.rank:
                line = line.model_copy(update={"rank": interleaved})
        signature = rule.signature
        blamed = signature.blames_printer or named is not None  # else the printer is a healthy rank reporting others
        role = "teardown" if rule.collateral_only and signature.role == "initiating" else signature.role
        return Finding(
            entry_id=rule.entry_id,
            signature=signature.pattern,
            role=role,
            weight=signature.weight,
            rank=line.rank if blamed else None,
            rank_named=named is not None and named.isdigit(),
            host=line.host if blamed else None,
            timestamp=line.timestamp,
            order=order,
            evidence=line,
        )
