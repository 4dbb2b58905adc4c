"""Consistent pseudonyms: the same value always gets the same ``<TYPE_n>`` within one session.

The mapping lives in this object only. It is never written anywhere, and nothing in the
package logs it.
"""

from __future__ import annotations

import re
from collections import Counter

# A placeholder as this package writes it: ``<HOST_3>``, ``<PRIVATE_KEY_1>``.
PLACEHOLDER_RE = re.compile(r"<([A-Z][A-Z0-9]*(?:_[A-Z][A-Z0-9]*)*)_([0-9]+)>")

# Types whose values compare case-insensitively (DNS names, e-mail, bucket names).
_CASELESS = frozenset({"EMAIL", "BUCKET"})
# The first label of a cluster FQDN names the machine: node-17 is node-17.cluster.internal.
_NODE_LABEL = re.compile(r"^(?=[^.]*[a-z])(?=[^.]*[0-9])[a-z0-9-]+(?=\.)")


def host_key(value: str) -> str:
    """Return the identity of a host name: its node label if it has one (``node-17``), else itself."""
    value = value.lower()
    label = _NODE_LABEL.match(value)
    return label.group() if label else value


class Pseudonyms:
    """The per-session mapping from (type, value) to a numbered placeholder."""

    def __init__(self) -> None:
        self._ids: dict[tuple[str, str], int] = {}
        self._issued: dict[str, set[int]] = {}
        self._reserved: dict[str, set[int]] = {}
        self.counts: Counter[str] = Counter()

    def placeholder(self, entity: str, value: str) -> str:
        """Return the placeholder for ``value`` of type ``entity`` and count one mask."""
        self.counts[entity] += 1
        return self.lookup(entity, value)

    def lookup(self, entity: str, value: str) -> str:
        """Return the placeholder for ``value`` of type ``entity``, assigning one if new."""
        if entity == "HOST":
            value = host_key(value)
        elif entity in _CASELESS:
            value = value.lower()
        key = (entity, value)
        number = self._ids.get(key)
        if number is None:
            issued = self._issued.setdefault(entity, set())
            reserved = self._reserved.get(entity, ())
            number = len(issued) + 1
            while number in reserved or number in issued:
                number += 1
            issued.add(number)
            self._ids[key] = number
        return f"<{entity}_{number}>"

    def reserve_literals(self, text: str) -> None:
        """Keep the numbers of placeholder-shaped text already in the input for itself."""
        if "<" not in text:
            return
        for match in PLACEHOLDER_RE.finditer(text):
            if not self.is_issued(match):
                self._reserved.setdefault(match.group(1), set()).add(int(match.group(2)))

    def is_issued(self, literal: re.Match[str]) -> bool:
        """Tell whether a placeholder-shaped literal equals one this session has handed out."""
        return int(literal.group(2)) in self._issued.get(literal.group(1), ())


def escape_literals(text: str, pseudonyms: Pseudonyms) -> str:
    """Rewrite input text that would read as one of our issued placeholders (``<_HOST_1>``)."""
    if "<" not in text:
        return text
    return PLACEHOLDER_RE.sub(lambda m: f"<_{m.group(1)}_{m.group(2)}>" if pseudonyms.is_issued(m) else m.group(0), text)
