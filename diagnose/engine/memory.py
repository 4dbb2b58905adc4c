"""Numeric discriminator for GPU memory: fragmentation or a full card, decided from the allocator's own numbers.

``cuda-memory-fragmentation``'s signatures capture the accounting sentence of a CUDA OOM (named groups:
the request, the card's capacity, the memory reserved but unallocated, or reserved and allocated in the older
wording). Fragmentation is the cause only when the trapped memory could have served the request and is a real
share of the card; otherwise the card is simply full: ``cuda-oom`` wins, with the trapped amount as a note.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import lru_cache

from diagnose.schema import Finding

FRAGMENTATION = "cuda-memory-fragmentation"
OOM = "cuda-oom"
SHARE_OF_CAPACITY = 0.33
"""Trapped memory below this share of the card is not what made it run out. Calibrated on dev: a full card is trapped
up to 28.7% (r9705, a 2.29 GiB request with 9.1 GiB reserved but not allocated of 31.7 GiB, labeled ``cuda-oom``
alone; r2072 20.5%, r5364 22% and r9300 10% are labeled fragmentation but accept ``cuda-oom``, and cuda-oom with a
note on the trapped memory names both); the fragmentation that allocator settings alone fixed starts at 38% (r2016;
r7401 48%): the cut is the geometric middle of that gap (it was 10%, from the gap 5.2%-20.5% before r9705 was read)."""
SHARE_OF_REQUEST = 1.0
"""Trapped memory must be at least the request (times this) to have served it."""
NOTE_FLOOR = 256 * 2**20
"""A minor trapped amount is still worth a note from this size on."""
GENERAL_CASE = {FRAGMENTATION: OOM}
"""An entry decided from captured numbers -> the entry it refines. A line no signature matched gives no numbers, so
retrieval that lands on the special case can only claim the general one."""
_UNITS = {"bytes": 1, "KiB": 2**10, "MiB": 2**20, "GiB": 2**30, "TiB": 2**40}


@dataclass(frozen=True)
class Accounting:
    """The allocator's numbers, in bytes."""

    request: float
    capacity: float | None
    unallocated: float

    @property
    def fragmented(self) -> bool:
        """True when the trapped memory could have served the request and is a real share of the card (unproven
        without the card's size: the special case needs its numbers, the general case does not)."""
        enough = self.unallocated >= SHARE_OF_REQUEST * self.request
        share = self.capacity is not None and self.unallocated >= SHARE_OF_CAPACITY * self.capacity
        return enough and share

    def note(self) -> str | None:
        """The secondary finding for a full card with some memory trapped, or None when it is negligible."""
        if self.fragmented or self.unallocated < NOTE_FLOOR:
            return None
        return f"also: {self.unallocated / 2**30:.1f} GiB reserved but unallocated (fragmented); expandable_segments may help"


@lru_cache(maxsize=64)
def _compiled(pattern: str) -> re.Pattern[str]:
    return re.compile(pattern)


def _bytes(groups: dict[str, str | None], name: str) -> float | None:
    value, unit = groups.get(name), groups.get(f"{name}_unit")
    return float(value) * _UNITS[unit] if value and unit in _UNITS else None


def accounting(finding: Finding) -> Accounting | None:
    """The numbers a fragmentation signature captured on the finding's line, or None."""
    match = _compiled(finding.signature).search(finding.evidence.text)
    if match is None:
        return None
    groups = match.groupdict()
    request = _bytes(groups, "request")
    unallocated = _bytes(groups, "unallocated")
    reserved, allocated = _bytes(groups, "reserved"), _bytes(groups, "allocated")
    if unallocated is None and reserved is not None and allocated is not None:
        unallocated = max(0.0, reserved - allocated)
    if request is None or unallocated is None:
        return None
    return Accounting(request=request, capacity=_bytes(groups, "capacity"), unallocated=unallocated)
