"""The presidio registry of this package's recognizers, built explicitly (no NLP engine).

The presidio types come from :mod:`redaction.framework`; the recognizers import them from
there too, so the import graph is a line: engine -> recognizers -> framework.
"""

from __future__ import annotations

import threading
from collections.abc import Iterable
from functools import cache
from typing import NamedTuple, cast

from redaction.cache import cache_dir
from redaction.framework import Pattern, PatternRecognizer, RecognizerRegistry, RecognizerResult
from redaction.prefilter import BLOCK_ID, PEM_ID, UNSURE_ID, Prefilter
from redaction.recognizers import all_recognizers
from redaction.recognizers.base import LogRecognizer
from redaction.unsure import UNSURE_PREFILTER

__all__ = ["Engine", "Pattern", "PatternRecognizer", "RecognizerRegistry", "RecognizerResult", "build_registry", "shared_engine"]

SPECIAL_PATTERNS = ((r"-----BEGIN[ A-Z0-9_-]{0,100}PRIVATE KEY", True, PEM_ID), (UNSURE_PREFILTER, False, UNSURE_ID))


def build_registry(recognizers: Iterable[LogRecognizer] | None = None) -> RecognizerRegistry:
    """Return a presidio registry holding ``recognizers`` (default: all of this package's), in priority order."""
    return RecognizerRegistry(recognizers=list(all_recognizers() if recognizers is None else recognizers), global_regex_flags=0)


class Engine(NamedTuple):
    """What every Redactor shares: the recognizers and the compiled prefilter (no session state)."""

    recognizers: list[LogRecognizer]
    block_ids: frozenset[int]
    prefilter: Prefilter
    max_window: int


_BUILDING = threading.Lock()
"""Held while the engine is built: web requests arriving together build it once, and write its disk cache once."""


def shared_engine(use_hyperscan: bool) -> Engine:
    """Build the recognizers and the prefilter once per process (the prefilter from the disk cache when fresh)."""
    with _BUILDING:
        return _built(use_hyperscan)


@cache
def _built(use_hyperscan: bool) -> Engine:
    recognizers = cast("list[LogRecognizer]", list(build_registry().recognizers))
    patterns = [(regex, rec.prefilter_caseless, i) for i, rec in enumerate(recognizers) if not rec.BLOCK_LEVEL for regex in rec.prefilter]
    patterns += [(rec.BLOCK_PREFILTER, False, BLOCK_ID) for rec in recognizers if rec.BLOCK_LEVEL]
    return Engine(
        recognizers=recognizers,
        block_ids=frozenset(i for i, rec in enumerate(recognizers) if rec.BLOCK_LEVEL),
        prefilter=Prefilter([*patterns, *SPECIAL_PATTERNS], use_hyperscan=use_hyperscan, cache_dir=cache_dir()),
        max_window=max((rec.window for rec in recognizers), default=0),
    )
