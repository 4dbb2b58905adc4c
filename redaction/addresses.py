"""IP address shapes, and the addresses that name no host (shared by recognizers and redactor)."""

from __future__ import annotations

import re

_OCTET = r"(?:25[0-5]|2[0-4][0-9]|1[0-9][0-9]|[1-9]?[0-9])"
IPV4 = rf"{_OCTET}(?:\.{_OCTET}){{3}}"
_H = r"[0-9A-Fa-f]{1,4}"
IPV6 = rf"(?:(?:{_H}:){{7}}{_H}|(?:{_H}(?::{_H}){{0,6}})?::(?:{_H}(?::{_H}){{0,6}})?)"
IPV4_RE = re.compile(rf"^{IPV4}$")

# Addresses that name no host: loopback, wildcard, broadcast and netmasks.
_NOBODY_V4 = re.compile(r"^(?:127\.|0\.|255\.)")
NOBODY_V6 = frozenset({"::", "::1", "::0"})


def is_anonymous_ip(value: str) -> bool:
    """Tell whether ``value`` is a loopback, wildcard or netmask address that names no host."""
    return bool(_NOBODY_V4.match(value)) or value.lower() in NOBODY_V6
