"""The recognizer registry: a literal list, in priority order, of every recognizer class."""

from __future__ import annotations

from redaction.recognizers.base import LogRecognizer
from redaction.recognizers.gitleaks import gitleaks_recognizers
from redaction.recognizers.hosts import (
    FqdnRecognizer,
    LinePrefixRecognizer,
    NamespaceRecognizer,
    NodeNameRecognizer,
    PodRecognizer,
)
from redaction.recognizers.network import EmailRecognizer, IPv4Recognizer, IPv6Recognizer
from redaction.recognizers.paths import BucketRecognizer, HomePathRecognizer
from redaction.recognizers.people import PersonNameRecognizer, SlurmUserRecognizer, WandbEntityRecognizer
from redaction.recognizers.tokens import (
    BearerRecognizer,
    JwtRecognizer,
    KeywordSecretRecognizer,
    KnownTokenRecognizer,
    UrlCredentialsRecognizer,
    WandbKeyRecognizer,
)

RECOGNIZERS: list[type[LogRecognizer]] = [
    KnownTokenRecognizer,
    JwtRecognizer,
    BearerRecognizer,
    UrlCredentialsRecognizer,
    KeywordSecretRecognizer,
    WandbKeyRecognizer,
    BucketRecognizer,
    HomePathRecognizer,
    EmailRecognizer,
    IPv4Recognizer,
    IPv6Recognizer,
    FqdnRecognizer,
    NodeNameRecognizer,
    LinePrefixRecognizer,
    PodRecognizer,
    NamespaceRecognizer,
    SlurmUserRecognizer,
    WandbEntityRecognizer,
    PersonNameRecognizer,
]


def all_recognizers() -> list[LogRecognizer]:
    """Instantiate every registered recognizer, then one per shipped gitleaks rule."""
    return [cls() for cls in RECOGNIZERS] + gitleaks_recognizers()
