"""The recognizer registry: a literal list, in priority order, of every recognizer class."""

from __future__ import annotations

from redaction.recognizers.base import LogRecognizer
from redaction.recognizers.credentials import (
    AuthHeaderRecognizer,
    CommandPasswordRecognizer,
    CookieRecognizer,
    NamedSecretRecognizer,
    SignedUrlRecognizer,
    WebhookRecognizer,
)
from redaction.recognizers.gitleaks import gitleaks_recognizers
from redaction.recognizers.hostlists import HostListRecognizer
from redaction.recognizers.hosts import (
    FqdnRecognizer,
    HostFieldRecognizer,
    LogPrefixHostRecognizer,
    NodeNameRecognizer,
)
from redaction.recognizers.kubernetes import NamespaceRecognizer, PodRecognizer
from redaction.recognizers.line_prefix import LinePrefixRecognizer
from redaction.recognizers.multiline import KubeSecretDataRecognizer, SplitSecretRecognizer
from redaction.recognizers.network import EmailRecognizer, IPv4Recognizer, IPv6Recognizer
from redaction.recognizers.paths import BucketRecognizer, HomePathRecognizer
from redaction.recognizers.people import IdOutputRecognizer, PersonNameRecognizer, SlurmUserRecognizer, WandbEntityRecognizer
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
    NamedSecretRecognizer,
    CommandPasswordRecognizer,
    SignedUrlRecognizer,
    CookieRecognizer,
    AuthHeaderRecognizer,
    WebhookRecognizer,
    SplitSecretRecognizer,
    KubeSecretDataRecognizer,
    BucketRecognizer,
    HomePathRecognizer,
    EmailRecognizer,
    IPv4Recognizer,
    IPv6Recognizer,
    FqdnRecognizer,
    NodeNameRecognizer,
    HostFieldRecognizer,
    LogPrefixHostRecognizer,
    HostListRecognizer,
    LinePrefixRecognizer,
    PodRecognizer,
    NamespaceRecognizer,
    SlurmUserRecognizer,
    IdOutputRecognizer,
    WandbEntityRecognizer,
    PersonNameRecognizer,
]


def all_recognizers() -> list[LogRecognizer]:
    """Instantiate every registered recognizer, then one per shipped gitleaks rule."""
    return [cls() for cls in RECOGNIZERS] + gitleaks_recognizers()
