"""Timestamps as seconds since the epoch, from the formats training logs print.

glog (``E1202 12:01:02.123456``, c10's ``E626 06:24:44.9`` with an unpadded month) and syslog have no year: the
reader stamps them in ``YEARLESS`` (a leap year no real log is from) and, once the whole log is read, moves them
into the earliest year a full date names (``rebase``), so the answer never depends on which file was read first.
"""

from __future__ import annotations

import re
from datetime import UTC, datetime
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from diagnose.parse.parsed_log import ParsedLog

ISO_DATE = re.compile(r"(?<!\d)(\d{4})-(\d\d)-(\d\d)[T _](\d\d):(\d\d):(\d\d)(?:[.,](\d{1,9}))?")
_ISO_HINT = re.compile(r"20\d\d-\d\d-\d\d[T _]\d\d:\d\d:\d\d")
"""A literal start lets ``re`` skip ahead (40x faster than ISO_DATE's leading look-behind on a chunk with no date)."""
_GLOG = re.compile(r"(?<![\w.])[IWEF](\d\d?)(\d\d) (\d\d):(\d\d):(\d\d)(?:\.(\d{1,9}))?\b")
"""glog pads the month (``E0122``); c10's own logger (``[rank0]:[E626 06:24:44.903881913 ...]``) does not."""
_SLASH = re.compile(r"(?<!\d)(\d{4})/(\d\d)/(\d\d) (\d\d):(\d\d):(\d\d)")
_SYSLOG = re.compile(r"^(Jan|Feb|Mar|Apr|May|Jun|Jul|Aug|Sep|Oct|Nov|Dec) +(\d{1,2}) (\d\d):(\d\d):(\d\d)")
_EPOCH = re.compile(r"^\[?(1[4-9]\d{8})(?:\.(\d{1,9}))?\]?\s")
YEARLESS = 1972
"""The year given to year-less timestamps while reading (a leap year, so 29 Feb parses)."""
_YEARLESS_END = 63072000.0 + 366 * 86400.0  # 1973-01-01T00:00:00Z
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


def rebase(stamp: float | None, year: int | None) -> float | None:
    """A timestamp read as ``YEARLESS`` moved into ``year`` (others, and None, unchanged)."""
    if stamp is None or year is None or not 63072000.0 <= stamp < _YEARLESS_END:
        return stamp
    moment = datetime.fromtimestamp(stamp, tz=UTC)
    try:
        return moment.replace(year=year).timestamp()
    except ValueError:  # 29 February in a year that has none
        return moment.replace(year=year, day=28).timestamp()


def rebase_log(log: ParsedLog, year: int) -> None:
    """Every year-less timestamp kept in ``log`` (lines, findings, events) moved into ``year``, in place."""
    lines = [*log.excerpts, *(f.evidence for f in log.findings), *(line for e in log.events for line in e.lines)]
    for line in {id(line): line for line in lines}.values():
        line.timestamp = rebase(line.timestamp, year)
    for finding in log.findings:
        finding.timestamp = rebase(finding.timestamp, year)
    for event in log.events:
        event.timestamp = rebase(event.timestamp, year)


def iso_year(text: str, limit: int) -> int | None:
    """The year of the first ISO date (2000-2099) in ``text[:limit]``, else None."""
    hint = _ISO_HINT.search(text, 0, limit)
    iso = ISO_DATE.search(text, hint.start(), limit) if hint else None
    return int(iso.group(1)) if iso else None
