"""tqdm progress bars: how long a bar had been running when it was printed.

tqdm (``tqdm/std.py`` ``format_meter``) prints ``| n/total [{elapsed}<{remaining}, {rate}]``, or ``n unit [{elapsed},
{rate}]`` when the total is unknown; ``elapsed`` is ``MM:SS`` or ``H:MM:SS``. A line that starts at the bracket (a
paste that cut the bar's head) is read too. Every kind of run prints such bars, so they are read on demand from the
lines kept around a finding, never scanned for as signatures: a log can be mostly bars.
"""

from __future__ import annotations

import re

from diagnose.parse.prefixes import body_of

_ELAPSED = re.compile(r"(?:(?:\| ?\d+/\d+|\d \w+) |^)\[(?:(\d+):)?(\d{1,2}):(\d\d)(?:<|, [\d.]+ ?\w+/s\])")


def bar_elapsed(text: str) -> float | None:
    """Seconds a tqdm bar on ``text`` had been running (its last one, when updates share the line), or None."""
    found = _ELAPSED.findall(body_of(text))
    if not found:
        return None
    hours, minutes, seconds = found[-1]
    return int(hours or 0) * 3600 + int(minutes) * 60 + int(seconds)
