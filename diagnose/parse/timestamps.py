"""Timestamps as seconds since the epoch, from the formats training logs print.

glog (``E1202 12:01:02.123456``) has no year: the caller passes the year of the
last full date seen in the same log (default 2000), which keeps ordering right.
"""

from __future__ import annotations

import re
from datetime import UTC, datetime

ISO_DATE = re.compile(r"(?<!\d)(\d{4})-(\d\d)-(\d\d)[T _](\d\d):(\d\d):(\d\d)(?:[.,](\d{1,9}))?")
_GLOG = re.compile(r"(?<![\w.])[IWEF](\d\d)(\d\d) (\d\d):(\d\d):(\d\d)(?:\.(\d{1,9}))?\b")
_SLASH = re.compile(r"(?<!\d)(\d{4})/(\d\d)/(\d\d) (\d\d):(\d\d):(\d\d)")
_SYSLOG = re.compile(r"^(Jan|Feb|Mar|Apr|May|Jun|Jul|Aug|Sep|Oct|Nov|Dec) +(\d{1,2}) (\d\d):(\d\d):(\d\d)")
_EPOCH = re.compile(r"^\[?(1[4-9]\d{8})(?:\.(\d{1,9}))?\]?\s")
_MONTHS = {m: i for i, m in enumerate(["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"], 1)}


def _epoch(year: int, month: int, day: int, hour: int, minute: int, second: int, frac: str | None) -> float | None:
    try:
        stamp = datetime(year, month, day, hour, minute, second, tzinfo=UTC).timestamp()
    except ValueError:
        return None
    return stamp + (float(f"0.{frac}") if frac else 0.0)


def parse_timestamp(text: str, *, year: int | None = None) -> float | None:
    """The first timestamp in ``text`` (within its first 120 characters), or None."""
    head = text[:120]
    match = ISO_DATE.search(head) or _SLASH.search(head)
    if match:
        y, mo, d, h, mi, s = (int(g) for g in match.groups()[:6])
        frac = match.group(7) if match.re is ISO_DATE else None
        return _epoch(y, mo, d, h, mi, s, frac)
    match = _GLOG.search(head)
    if match:
        mo, d, h, mi, s = (int(g) for g in match.groups()[:5])
        return _epoch(year or 2000, mo, d, h, mi, s, match.group(6))
    match = _SYSLOG.match(head)
    if match:
        day, hour, minute, second = (int(g) for g in match.groups()[1:])
        return _epoch(year or 2000, _MONTHS[match.group(1)], day, hour, minute, second, None)
    match = _EPOCH.match(head)
    if match:
        return float(match.group(1)) + (float(f"0.{match.group(2)}") if match.group(2) else 0.0)
    return None
