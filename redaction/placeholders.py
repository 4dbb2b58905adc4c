"""Consistent pseudonyms: the same value always gets the same ``<TYPE_n>`` within one session.

The mapping lives in this object only. It is never written anywhere, and nothing in the
package logs it. :meth:`Pseudonyms.export_state` hands out a form that holds no raw value:
each value as a keyed hash (HMAC-SHA256 under a random per-session key), so a later session
(a chat about the same log) gives a value it meets again the log's placeholder.
"""

from __future__ import annotations

import hashlib
import hmac
import re
import secrets
from collections import Counter
from typing import Any

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


def normalize(entity: str, value: str) -> str:
    """The form of a value its placeholder is keyed on: a host's node label, lower case for DNS-like types."""
    if entity == "HOST":
        return host_key(value)
    return value.lower() if entity in _CASELESS else value


class Pseudonyms:
    """The per-session mapping from (type, value) to a numbered placeholder."""

    def __init__(self, key: bytes | None = None) -> None:
        self._ids: dict[tuple[str, str], int] = {}
        self._issued: dict[str, set[int]] = {}
        self._reserved: dict[str, set[int]] = {}
        self.counts: Counter[str] = Counter()
        self._key = key or secrets.token_bytes(32)
        # values of an earlier session, as keyed hashes: entity -> {digest: number}
        self.hashed: dict[str, dict[str, int]] = {}

    def placeholder(self, entity: str, value: str) -> str:
        """Return the placeholder for ``value`` of type ``entity`` and count one mask."""
        self.counts[entity] += 1
        return self.lookup(entity, value)

    def lookup(self, entity: str, value: str) -> str:
        """Return the placeholder for ``value`` of type ``entity``, assigning one if new."""
        value = normalize(entity, value)
        key = (entity, value)
        number = self._ids.get(key)
        if number is None and self.hashed:
            number = self.hashed.get(entity, {}).get(self.digest(entity, value))
            if number is not None:
                self._ids[key] = number
        if number is None:
            issued = self._issued.setdefault(entity, set())
            reserved = self._reserved.get(entity, ())
            number = len(issued) + 1
            while number in reserved or number in issued:
                number += 1
            issued.add(number)
            self._ids[key] = number
        return f"<{entity}_{number}>"

    def digest(self, entity: str, value: str) -> str:
        """The keyed hash that stands for a (normalised) value in exported state."""
        message = f"{entity}\0{value}".encode("utf-8", "surrogatepass")
        return hmac.new(self._key, message, hashlib.sha256).hexdigest()[:32]

    def known_number(self, entity: str, value: str) -> int | None:
        """The number an earlier session gave ``value`` (from exported state), else None."""
        table = self.hashed.get(entity)
        return table.get(self.digest(entity, normalize(entity, value))) if table else None

    def export_state(self) -> dict[str, Any]:
        """A JSON-safe state with no raw value: the key, issued and reserved numbers, hashed values."""
        values: dict[str, dict[str, int]] = {entity: dict(table) for entity, table in self.hashed.items()}
        for (entity, value), number in self._ids.items():
            values.setdefault(entity, {})[self.digest(entity, value)] = number
        return {
            "key": self._key.hex(),
            "issued": {entity: sorted(numbers) for entity, numbers in self._issued.items()},
            "reserved": {entity: sorted(numbers) for entity, numbers in self._reserved.items()},
            "values": values,
        }

    @classmethod
    def from_state(cls, state: dict[str, Any]) -> Pseudonyms:
        """Rebuild from :meth:`export_state`: known hashes map to their numbers, new values number on."""
        pseudonyms = cls(bytes.fromhex(state["key"]))
        pseudonyms._issued = {entity: set(map(int, numbers)) for entity, numbers in state.get("issued", {}).items()}
        pseudonyms._reserved = {entity: set(map(int, numbers)) for entity, numbers in state.get("reserved", {}).items()}
        pseudonyms.hashed = {
            entity: {str(digest): int(number) for digest, number in table.items()} for entity, table in state.get("values", {}).items()
        }
        return pseudonyms

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
