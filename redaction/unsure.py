"""Values the redactor was unsure about: random-looking strings no recognizer claimed.

A recognizer masks what its context proves to be sensitive; a random 32-character string
with no key word around it stays. Such values are listed (with their line numbers) so that
``diagnose redact --stats`` can show them to the user, who can judge them.

The listed snippet is the *masked* line around the value with the value itself in clear:
it is meant for the user's own terminal only. It must never be logged, stored, cached, sent
to a model or put into exported state; the list lives in the :class:`~redaction.Redactor`
object's memory and dies with it.

What counts as random: 20+ characters of a token alphabet (letters, digits, ``_+/-``, ``=``
padding) with upper and lower case and digits mixed the way random text mixes them and high
entropy, that are not plain hex or a UUID (commit ids and digests fill training logs; a
40-hex W&B key is masked by context instead), not a path and not a ``KEY=value`` pair.
"""

from __future__ import annotations

import math
import re
from itertools import pairwise
from typing import NamedTuple

from redaction.entropy import shannon_entropy

# Hyperscan prefilter: a run of token characters long enough to be a credential.
UNSURE_PREFILTER = r"[A-Za-z0-9_+=-]{20}"
_CANDIDATE = re.compile(r"(?<![A-Za-z0-9_+/=<-])[A-Za-z0-9_+/-]{20,}={0,2}(?![A-Za-z0-9_+/=>-])")
_HEX_OR_UUID = re.compile(r"^(?:[0-9a-fA-F]+|[0-9a-fA-F]{8}(?:-[0-9a-fA-F]{4}){3}-[0-9a-fA-F]{12})$")
_SNIPPET = 40


class Unsure(NamedTuple):
    """One value left unmasked: the 1-based line of the session's input, and a masked snippet around it."""

    line_no: int | None
    snippet: str


def _kind(c: str) -> int:
    return 0 if c.islower() else 1 if c.isupper() else 2 if c.isdigit() else 3


def looks_random(value: str) -> bool:
    """Tell whether ``value`` reads like a generated credential rather than a name, path, hash or number.

    Random text over letters and digits changes character class (lower, upper, digit) at
    about 60% of positions; CamelCase names and versions (``RunningAvgSamplesPerSec``,
    ``Mistral-7B-v0``) at well under half.
    """
    value = value.rstrip("=")
    if _HEX_OR_UUID.match(value) or value.count("/") > 1 or value.count("-") > 3 or value.count("_") > 3:
        return False
    digits = sum(c.isdigit() for c in value)
    has_upper = any(c.isupper() for c in value)
    has_lower = any(c.islower() for c in value)
    changes = sum(_kind(a) != _kind(b) for a, b in pairwise(value)) / (len(value) - 1)
    floor = min(4.0, 0.8 * math.log2(len(value)))
    return digits >= 2 and has_upper and has_lower and changes >= 0.45 and shannon_entropy(value) >= floor


class UnsureLog:
    """The bounded list of unsure values of one session (the first ``LIMIT``), and their total."""

    LIMIT = 100

    def __init__(self) -> None:
        self.items: list[Unsure] = []
        self.total = 0

    def check(self, masked_line: str, line_no: int | None) -> None:
        """Note every random-looking value still in ``masked_line``."""
        for match in _CANDIDATE.finditer(masked_line):
            if not looks_random(match.group()):
                continue
            self.total += 1
            if len(self.items) < self.LIMIT:
                start, end = max(0, match.start() - _SNIPPET), match.end() + _SNIPPET
                snippet = ("…" if start else "") + masked_line[start:end] + ("…" if end < len(masked_line) else "")
                self.items.append(Unsure(line_no, snippet))
