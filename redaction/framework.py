"""The presidio types every recognizer builds on; the only module that imports ``presidio_analyzer``.

Importing any ``presidio_analyzer`` submodule runs the package's ``__init__`` first, which
eagerly imports ``AnalyzerEngine`` and the recognizer registry and through them spaCy
(about 0.55 s of the 0.6 s import, measured with ``python -X importtime``). No submodule
import avoids that, so this module is imported once, lazily: by :class:`redaction.Redactor`
on first construction, never by ``import redaction``.

No NLP engine is built: recognizers are called directly on the few lines the prefilter
selects, which is what presidio's ``AnalyzerEngine`` would do with a ``no_op`` NLP engine,
minus the network look-ups of the default engine (a spaCy model download) and of presidio's
e-mail recognizer (tldextract's public suffix list). Neither is used here, so nothing needs
``TLDEXTRACT_PUBLIC_SUFFIX_LIST_URLS`` and ``os.environ`` is never written.
"""

from __future__ import annotations

import re

from presidio_analyzer import Pattern, PatternRecognizer, RecognizerRegistry, RecognizerResult

__all__ = ["LazyPattern", "Pattern", "PatternRecognizer", "RecognizerRegistry", "RecognizerResult"]


class LazyPattern(Pattern):
    """A presidio ``Pattern`` compiled with Python's ``re`` on first use, and validated then.

    ``Pattern.__init__`` validates every regex by compiling it with the ``regex`` package;
    the recognizers then compile it again with ``re``. With ~450 patterns that is most of
    the cost of building the recognizers, and most patterns never run on a given log (the
    prefilter selects them). Here the one ``re.compile`` is the validation; a contract test
    compiles every shipped pattern.
    """

    def __init__(self, name: str, regex: str, score: float, flags: int = 0) -> None:
        if not 0 <= score <= 1:
            raise ValueError(f"Invalid score: {score}. Score should be between 0 and 1")
        self.name = name
        self.regex = regex
        self.score = score
        self.flags = flags
        self._compiled: re.Pattern[str] | None = None

    @property  # type: ignore[override]  # presidio's attribute, computed on first use here
    def compiled_regex(self) -> re.Pattern[str]:
        """The compiled regex (compiled on first access)."""
        if self._compiled is None:
            self._compiled = re.compile(self.regex, self.flags)
        return self._compiled

    @compiled_regex.setter
    def compiled_regex(self, value: re.Pattern[str] | None) -> None:
        self._compiled = value

    @property  # type: ignore[override]
    def compiled_with_flags(self) -> int:
        """The flags the regex is compiled with (presidio recompiles when they differ)."""
        return self.flags

    @compiled_with_flags.setter
    def compiled_with_flags(self, value: int) -> None:
        self.flags = value
