"""The presidio side: result types, the recognizer base classes and the registry.

This is the only module that imports ``presidio_analyzer``. It is imported lazily (by
:class:`redaction.Redactor` on construction), so ``import redaction`` stays cheap.

No NLP engine is built: recognizers are called directly on the few lines the prefilter
selects, which is what presidio's ``AnalyzerEngine`` would do with a ``no_op`` NLP engine,
minus the network look-ups of the default engine (a spaCy model download) and of presidio's
e-mail recognizer (tldextract's public suffix list). Neither is used here, so nothing needs
``TLDEXTRACT_PUBLIC_SUFFIX_LIST_URLS`` and ``os.environ`` is never written.
"""

from __future__ import annotations

from presidio_analyzer import Pattern, PatternRecognizer, RecognizerRegistry, RecognizerResult

__all__ = ["Pattern", "PatternRecognizer", "RecognizerRegistry", "RecognizerResult", "build_registry"]


def build_registry() -> RecognizerRegistry:
    """Return a presidio registry holding exactly this package's recognizers, in priority order."""
    from redaction.recognizers import all_recognizers

    return RecognizerRegistry(recognizers=all_recognizers(), global_regex_flags=0)
