"""The numbers a finding's signature captured on its line, by group name (numeric discriminators read them)."""

from __future__ import annotations

import re
from functools import lru_cache

from diagnose.schema import Finding


@lru_cache(maxsize=32)
def _compiled(pattern: str) -> re.Pattern[str]:
    return re.compile(pattern)


def captured(finding: Finding, *names: str) -> list[float] | None:
    """The numbers the finding's signature captured under these names, or None when one is missing."""
    match = _compiled(finding.signature).search(finding.evidence.text)
    groups = match.groupdict() if match else {}
    try:
        return [float(groups[name]) for name in names]
    except (KeyError, TypeError, ValueError):
        return None
