"""IP addresses and e-mail addresses."""

from __future__ import annotations

import re

from redaction.addresses import IPV4, IPV6, NOBODY_V6, is_anonymous_ip
from redaction.recognizers.base import LogRecognizer

_VERSION_BEFORE = re.compile(
    r"(?i)(?:version|\bver|\bv|==|-|\b(?:cudnn|tensorrt|trt|nccl|libnccl|cuda|driver|torch|python|gcc|"
    r"glibc|openmpi|mpi|ucx|efa|rocm|nvidia|apex|deepspeed|jax|tensorflow)[\w.-]*)[\s:=]*$"
)

# ``pip list``/``conda list``/``pip freeze`` rows: a package name, then ``==`` or a run of blanks, then
# its version; CUDA libraries have four-part versions (``nvidia-cublas-cu12   12.1.3.1``).
_PACKAGE_ROW_BEFORE = re.compile(r"(?:^|[\s:>\]])[A-Za-z][A-Za-z0-9_.+-]*(?:==|>=|<=|~=|\s{2,}|\s+[0-9]+\s+)$")
_PACKAGE_ROW_AFTER = re.compile(r"^\s+(?:[\w.-]+\s+)?(?:pypi|conda-forge|nvidia|defaults|pytorch|<pip>|anaconda)\b|^\s*$")


class IPv4Recognizer(LogRecognizer):
    """Dotted-quad IPv4 addresses, minus loopback/wildcard and version strings like 8.9.2.26."""

    ENTITY = "IP"
    PATTERNS = (("ipv4", rf"(?<![\w.]){IPV4}(?![\w]|\.[0-9])", 0.6),)
    PREFILTER = (r"[0-9]{1,3}\.[0-9]{1,3}\.[0-9]{1,3}\.[0-9]{1,3}",)

    def invalidate_context(self, text: str, start: int, end: int, entity: str) -> bool:
        """Drop anonymous addresses and dotted quads that follow a version word."""
        if is_anonymous_ip(text[start:end]) or _VERSION_BEFORE.search(text[max(0, start - 24) : start]):
            return True
        before = text[max(0, start - 80) : start]
        return bool(_PACKAGE_ROW_BEFORE.search(before)) and (
            "==" in before[-4:] or bool(_PACKAGE_ROW_AFTER.match(text[end : end + 40])) or "-cu1" in before or "nvidia" in before
        )


class IPv6Recognizer(LogRecognizer):
    """IPv6 addresses, full or compressed, with at least two groups (not ``::`` or ``c10d::``)."""

    ENTITY = "IP"
    PATTERNS = (("ipv6", rf"(?<![\w.]){IPV6}(?![\w:]|\.[0-9])", 0.6),)
    PREFILTER = (r"[0-9A-Fa-f]{1,4}::|::[0-9A-Fa-f]{1,4}|(?:[0-9A-Fa-f]{1,4}:){7}[0-9A-Fa-f]",)

    def invalidate_result(self, pattern_text: str) -> bool | None:
        """Drop the wildcard and loopback, and shapes with fewer than two groups."""
        groups = [g for g in pattern_text.split(":") if g]
        return pattern_text.lower() in NOBODY_V6 or len(groups) < 2


_URL_USERINFO_BEFORE = re.compile(r"[A-Za-z][A-Za-z0-9+.-]{0,20}://[^\s/@]*$")
# Local parts of generic forge SSH users: ``git@github.com`` names nobody.
_FORGE_USERS = frozenset({"git", "hg", "ssh"})


class EmailRecognizer(LogRecognizer):
    """E-mail addresses (and ``user@host`` SSH targets, which have the same shape)."""

    ENTITY = "EMAIL"
    PATTERNS = (
        (
            "email",
            r"(?<![\w.+%-])[A-Za-z0-9][A-Za-z0-9._%+-]*@[A-Za-z0-9](?:[A-Za-z0-9-]*[A-Za-z0-9])?"
            r"(?:\.[A-Za-z0-9](?:[A-Za-z0-9-]*[A-Za-z0-9])?)*\.[A-Za-z]{2,}(?![\w-])",
            0.7,
        ),
    )
    PREFILTER = (r"[A-Za-z0-9._%+-]@[A-Za-z0-9-]+\.[A-Za-z0-9.-]*[A-Za-z]",)

    def invalidate_result(self, pattern_text: str) -> bool | None:
        """Keep generic forge SSH users such as ``git@github.com``."""
        return pattern_text.split("@", 1)[0].lower() in _FORGE_USERS

    def invalidate_context(self, text: str, start: int, end: int, entity: str) -> bool:
        """Leave ``scheme://user:password@host`` to the URL recognizers: that is no address."""
        return bool(_URL_USERINFO_BEFORE.search(text[max(0, start - 300) : start]))
