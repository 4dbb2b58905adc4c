"""Numeric discriminator for fp16 loss scaling: a scale driven down to a floor is a collapse, a few skips are not.

Dynamic loss scaling skips a step and halves the scale on every overflow; healthy runs do this now and then
and recover. ``fp16-loss-scale-collapse``'s noise signature captures the scale each reduction reached (named
groups ``reduced``, ``apex``, ``dynamic``: DeepSpeed, apex and fairseq/Megatron wordings; ``log2``: the scale's
base-2 logarithm, as openai's diffusion trainers print it); when it has been
reduced several times and reached ``FLOOR``, the run is collapsing even before the library gives up. A scale
reduced below 1 (``Attempted loss scale: 0.0, reducing to 0.0``) overflows even unscaled: one such line is a collapse.
"""

from __future__ import annotations

import re
from functools import lru_cache

from diagnose.engine.candidates import Scored
from diagnose.parse.parsed_log import ParsedLog

ENTRY = "fp16-loss-scale-collapse"
FLOOR = 16.0
"""A loss scale at or below this (from a usual start of 2**16) means overflows even at tiny scales."""
MIN_REDUCTIONS = 3
"""Fewer reductions than this are the usual occasional skipped step."""
UNSCALED = 1.0
"""A scale reduced below this overflows even unscaled (DeepSpeed's default min_loss_scale is 1): one such line is enough."""
SCORE = 0.75
_GROUPS = ("reduced", "apex", "dynamic")


@lru_cache(maxsize=16)
def _compiled(pattern: str) -> re.Pattern[str]:
    return re.compile(pattern)


def _scale(text: str, pattern: str) -> float | None:
    match = _compiled(pattern).search(text)
    if match is None:
        return None
    groups = match.groupdict()
    value = next((groups[name] for name in _GROUPS if groups.get(name)), None)
    try:
        if value is not None:
            return float(value)
        return 2.0 ** float(groups["log2"]) if groups.get("log2") else None
    except (ValueError, OverflowError):
        return None


def loss_scale_collapse(log: ParsedLog) -> Scored | None:
    """A candidate when the loss scale was reduced at least MIN_REDUCTIONS times down to FLOOR, or once below UNSCALED
    (``reducing to 0.0``), else None."""
    findings = [f for f in log.findings if f.entry_id == ENTRY and f.role == "noise"]
    scaled = [(f, s) for f, s in ((f, _scale(f.evidence.text, f.signature)) for f in findings) if s is not None]
    # the reader keeps the first few lines of a repeated message and the latest: enough to count to MIN_REDUCTIONS
    reductions = len({(f.evidence.source, f.evidence.line) for f, _ in scaled})
    lowest = min((s for _, s in scaled), default=None)
    if lowest is None or lowest > FLOOR or (reductions < MIN_REDUCTIONS and lowest >= UNSCALED):
        return None
    return Scored(ENTRY, SCORE, [f for f, _ in scaled])
