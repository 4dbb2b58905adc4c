"""The base of every recognizer here: a presidio ``PatternRecognizer`` that masks named groups.

A pattern's named groups say what to mask and as which type: ``(?P<USER>...)`` masks that
group as ``USER``; ``(?P<HOST__2>...)`` is a second ``HOST`` group in the same pattern. A
pattern without named groups masks the whole match as the recognizer's entity. Each match
goes through presidio's hooks: ``validate_result`` (entropy here) and ``invalidate_result``,
plus ``invalidate_context`` which also sees the text around the match.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from typing import Any, ClassVar

from redaction.entropy import shannon_entropy
from redaction.framework import LazyPattern, Pattern, PatternRecognizer, RecognizerResult

__all__ = ["NAME_KEY", "LogRecognizer", "entity_of_group", "shannon_entropy"]

NAME_KEY = RecognizerResult.RECOGNIZER_NAME_KEY


def entity_of_group(group: str) -> str:
    """Map a group name to its entity type: ``HOST__2`` -> ``HOST``."""
    return group.split("__", 1)[0]


class LogRecognizer(PatternRecognizer):
    """A ``PatternRecognizer`` over one log line that masks named groups.

    Subclasses set ``ENTITY``, ``PATTERNS`` as ``(name, regex, score)`` and optionally
    ``PREFILTER``: Hyperscan-compatible regexes that match wherever a pattern can (the
    patterns themselves when empty), and ``MIN_ENTROPY`` for the masked text.
    """

    patterns: list[Any]
    name: str
    ENTITY: ClassVar[str] = "TOKEN"
    PATTERNS: ClassVar[Sequence[tuple[str, str, float]]] = ()
    PREFILTER: ClassVar[Sequence[str]] = ()
    PREFILTER_CASELESS: ClassVar[bool] = False
    FLAGS: ClassVar[int] = 0
    MIN_ENTROPY: ClassVar[float] = 0.0
    # Lines before the candidate line that a match may start on (0: the line alone).
    WINDOW: ClassVar[int] = 0
    # Types this recognizer finds that are too generic to mask wherever else they appear
    # (see ``redaction.known``): a URL's user is often a service name such as ``mlflow``.
    NO_SWEEP: ClassVar[frozenset[str]] = frozenset()
    # Run by the redactor on whole runs of lines (``sub_block``) instead of via the prefilter.
    BLOCK_LEVEL: ClassVar[bool] = False
    # A block-level recognizer's superset regex of the lines ``sub_block`` may change (a block with none skips it).
    BLOCK_PREFILTER: ClassVar[str] = "^"

    def __init__(
        self,
        *,
        name: str | None = None,
        entity: str | None = None,
        patterns: Sequence[tuple[str, str, float]] | None = None,
        prefilter: Sequence[str] | None = None,
        prefilter_caseless: bool | None = None,
        min_entropy: float | None = None,
        flags: int | None = None,
        window: int | None = None,
    ) -> None:
        entity = entity or self.ENTITY
        flags = self.FLAGS if flags is None else flags
        specs = list(patterns if patterns is not None else self.PATTERNS)
        presidio_patterns: list[Pattern] = [LazyPattern(pattern_name, regex, score, flags) for pattern_name, regex, score in specs]
        super().__init__(
            supported_entity=entity,
            name=name or type(self).__name__,
            patterns=presidio_patterns,
            global_regex_flags=flags,
        )
        self.entity = entity
        self.min_entropy = self.MIN_ENTROPY if min_entropy is None else min_entropy
        self.window = self.WINDOW if window is None else window
        self.prefilter = tuple(prefilter if prefilter is not None else self.PREFILTER) or tuple(regex for _, regex, _ in specs)
        self.prefilter_caseless = self.PREFILTER_CASELESS if prefilter_caseless is None else prefilter_caseless
        self._groups: list[list[tuple[str, str]]] | None = None

    def sub_block(self, data: bytes, replace: Callable[[bytes], bytes]) -> bytes:
        """Mask a whole block of lines at once: only ``BLOCK_LEVEL`` recognizers do; the others leave it as it is."""
        return data

    @property
    def groups(self) -> list[list[tuple[str, str]]]:
        """Per pattern, its named groups and their entity types (compiles the patterns)."""
        if self._groups is None:
            self._groups = [[(g, entity_of_group(g)) for g in p.compiled_regex.groupindex] for p in self.patterns]
        return self._groups

    def analyze(
        self,
        text: str,
        entities: list[str] | None = None,
        nlp_artifacts: object = None,
        regex_flags: int | None = None,
    ) -> list[RecognizerResult]:
        """Return one ``RecognizerResult`` per masked group of every accepted match in ``text``."""
        results: list[RecognizerResult] = []
        for pattern, groups in zip(self.patterns, self.groups, strict=True):
            for match in pattern.compiled_regex.finditer(text):
                for (start, end), entity in self.spans(match, groups):
                    value = text[start:end]
                    if not value or self.validate_result(value) is False:
                        continue
                    if self.invalidate_result(value) or self.invalidate_context(text, start, end, entity):
                        continue
                    results.append(RecognizerResult(entity, start, end, pattern.score, recognition_metadata={NAME_KEY: self.name}))
        return results

    def spans(self, match: re.Match[str], groups: list[tuple[str, str]]) -> list[tuple[tuple[int, int], str]]:
        """Return the ``((start, end), entity)`` stretches of ``match`` to mask."""
        if groups:
            return [(match.span(g), entity) for g, entity in groups if match.group(g)]
        return [(match.span(), self.entity)]

    def validate_result(self, pattern_text: str) -> bool | None:
        """Reject masked text whose entropy is below ``min_entropy`` (None: no opinion)."""
        if self.min_entropy and shannon_entropy(pattern_text) < self.min_entropy:
            return False
        return None

    def invalidate_context(self, text: str, start: int, end: int, entity: str) -> bool:
        """Tell whether the text around ``text[start:end]`` shows it is not sensitive."""
        return False
