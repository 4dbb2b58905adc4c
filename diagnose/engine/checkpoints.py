"""Discriminator for an empty or cut checkpoint: pickle's end-of-data errors, raised inside ``torch.load``.

``EOFError: Ran out of input`` and ``UnpicklingError: pickle data was truncated`` say only that a pickle stream ended
early. ``checkpoint-mismatch``'s noise signature finds them (its group ``end_of_data``); the frame that raised them
decides what the stream was.
Inside ``torch.load`` (``torch/serialization.py``: ``load``, ``_load``, ``_legacy_load``) it is a checkpoint file that is
empty or cut short (read while another rank was still writing it, saved by a process that was killed, copied in part).
Anywhere else it stays unnamed: a DataLoader worker's pipe closed by a killed parent (``multiprocessing``), the user's
own ``pickle.load`` of a data file.
"""

from __future__ import annotations

import re
from functools import lru_cache

from diagnose.engine.candidates import Scored
from diagnose.parse.parsed_log import ParsedLog
from diagnose.parse.prefixes import body_of
from diagnose.schema import Finding

ENTRY = "checkpoint-mismatch"
SCORE = 0.8
GROUP = "end_of_data"
_LOAD_FRAME = re.compile(r'torch[/\\]serialization\.py", line \d+, in _?(?:legacy_)?load\b')
"""A traceback frame of ``torch.load`` or its readers (indented as printed, or pasted flush left with its code)."""
FRAME_LOOKBACK = 3
"""Lines above the exception where its innermost frame is: the frame, its source line, a blank line at most."""


@lru_cache(maxsize=16)
def _compiled(pattern: str) -> re.Pattern[str]:
    return re.compile(pattern)


def _ran_out(finding: Finding) -> bool:
    match = _compiled(finding.signature).search(finding.evidence.text)
    return match is not None and bool(match.groupdict().get(GROUP))


def _raised_in_load(log: ParsedLog, finding: Finding) -> bool:
    return any(_LOAD_FRAME.search(body_of(text)) for text in log.lines_above(finding.evidence, FRAME_LOOKBACK))


def truncated_checkpoint(log: ParsedLog) -> Scored | None:
    """A candidate when pickle ran out of data inside ``torch.load``, else None."""
    ended = [f for f in log.findings if f.entry_id == ENTRY and f.role == "noise" and _ran_out(f) and _raised_in_load(log, f)]
    if not ended:
        return None
    item = Scored(ENTRY, SCORE, ended)
    item.notes.append("pickle ran out of data inside torch.load: the checkpoint file is empty or was cut short")
    return item
