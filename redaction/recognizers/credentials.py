"""Credentials named by where they stand, whatever they look like (no entropy gate).

A value assigned to ``*_KEY``/``*_TOKEN``/``*_SECRET``/``*_PASSWORD``/``*_PASS``/``*_PWD``, a
password flag of a well-known command, a signed URL's signature, a cookie, an HTTP
``Authorization`` header (also inside a ``send: b'...\\r\\n...'`` debug dump), a webhook URL,
(multi-line shapes are in :mod:`redaction.recognizers.multiline`).
"""

from __future__ import annotations

import re

from redaction.recognizers.base import LogRecognizer

# A value: stops at quotes, whitespace, separators and a backslash (``\"`` ends escaped JSON).
VALUE = r"[^\s\"'`,;{}()\[\]<>|\\]"
# Values that stand for no secret: booleans, empties, references to variables, masks, placeholders.
_NOT_A_VALUE = re.compile(
    r"(?i)^(?:true|false|none|null|nil|undefined|unset|required|optional|redacted|hidden|masked|secret|password|"
    r"changeme|xxx+|\*+|\.+|-+|#+|\$.*|%\(?\w*\)?[sdr]|\{\{.*|<.*|os\.environ.*|env\..*|os\.getenv.*|getpass.*|"
    r"[0-9]{1,5}|\[?redacted\]?|yes|no|on|off|n/a|empty|str|string|int)$"
)
_METAVAR = re.compile(r"^[A-Z][A-Z_]*\]?$")
# Words that follow a key's name in prose (``HF_TOKEN is not set``), not values.
_PROSE = frozenset(
    {
        "is",
        "not",
        "was",
        "has",
        "have",
        "must",
        "should",
        "will",
        "can",
        "could",
        "may",
        "missing",
        "found",
        "set",
        "environment",
        "variable",
        "variables",
        "env",
        "from",
        "in",
        "to",
        "for",
        "the",
        "and",
        "or",
        "of",
        "with",
        "provided",
        "available",
        "invalid",
        "present",
        "defined",
        "detected",
        "loaded",
        "needed",
        "required",
        "file",
        "value",
        "values",
        "does",
        "did",
        "are",
        "be",
        "been",
        "if",
        "when",
        "then",
        "via",
        "using",
        "as",
        "by",
        "at",
    }
)
SUFFIX = r"(?:KEY|TOKEN|SECRET|PASSWORD|PASSWD|PASS|PWD|PASSPHRASE|CREDENTIALS?)"
# Upper-case names that are the key word itself or end in it without an underscore: PGPASSWORD, SECRET, APIKEY.
_BARE = r"(?:PASSWORD|PASSWD|PWD|SECRET|TOKEN|APIKEY|PASSPHRASE)"
# Flag names (after ``--`` and optional words: ``--db-password``, ``--hf_token``): the value is a credential.
_FLAG = r"(?:password|passwd|pass|pwd|token|secret|api[-_]?key|apikey|access[-_]?key|auth)(?![A-Za-z0-9])"


def is_value(text: str) -> bool:
    """Tell whether ``text`` can be a credential's value (not a placeholder, flag or reference)."""
    stripped = text.strip("\"'`")
    return bool(stripped) and not _NOT_A_VALUE.match(stripped) and "****" not in stripped


class NamedSecretRecognizer(LogRecognizer):
    """``KAGGLE_KEY=...``, ``export DB_PASSWORD=...``, ``"api_key": "..."``, ``MAPBOX_KEY abc``, ``--password pw``."""

    ENTITY = "TOKEN"
    PATTERNS = (
        # upper-case (environment) names: any value, any separator (=, :, space), quoted or not
        (
            "env name",
            rf"(?<![A-Za-z0-9])[\\\"']?(?:[A-Z][A-Z0-9_]*_{SUFFIX}|[A-Z0-9]*{_BARE})(?![A-Za-z0-9])[\\\"']*(?P<sep>\s*[=:]\s*|\s+)"
            rf"(?:\\?[\"'])?(?P<TOKEN>{VALUE}+)",
            0.7,
        ),
        # lower/mixed-case names of passwords and secrets: any value after = or :
        (
            "password name",
            r"(?i)(?<![A-Za-z0-9])[\\\"']?[a-z0-9_.-]*(?:password|passwd|passphrase|secret|pwd|api[_-]?key|apikey|access[_-]?token|"
            r"auth[_-]?token|refresh[_-]?token|client[_-]?secret|secret[_-]?key|private[_-]?key)(?![A-Za-z0-9])[\\\"']*"
            rf"\s*(?:=|:|=>)\s*(?:\\?[\"'])?(?P<TOKEN>{VALUE}+)",
            0.65,
        ),
        # password, token and key flags of command lines
        (
            "flag",
            rf"(?<![\w-])--?(?:[a-z0-9]+[-_])*{_FLAG}(?:=|\s+)[\"']?(?P<TOKEN>{VALUE}+)",
            0.7,
        ),
    )
    PREFILTER = (
        rf"[A-Z0-9]_{SUFFIX}",
        rf"{_BARE}[\\\"']*(?:\s*[=:]|\s)",
        r"(?i)(?:password|passwd|passphrase|secret|pwd|api[_-]?key|apikey|access[_-]?token|auth[_-]?token|refresh[_-]?token|"
        r"client[_-]?secret|secret[_-]?key|private[_-]?key)[\\\"']*\s*[=:]",
        r"[-_](?:password|passwd|pass|pwd|token|secret|api[-_]?key|apikey|access[-_]?key|auth)[= ]",
    )

    def spans(self, match: re.Match[str], groups: list[tuple[str, str]]) -> list[tuple[tuple[int, int], str]]:
        """The value; after a bare space, only a value that is no word of prose."""
        value = match.group("TOKEN")
        if not is_value(value):
            return []
        if "sep" in match.re.groupindex and not match.group("sep").strip() and (value.lower() in _PROSE or len(value) < 6):
            return []
        if match.group().lstrip("\\\"'").startswith("-") and (value.startswith("-") or value.lower() in _PROSE or _METAVAR.match(value)):
            return []  # the next flag, a word, or argparse's metavar (``[--hub_token HUB_TOKEN]``)
        return [(match.span("TOKEN"), self.entity)]


# Commands that take a password in a flag of their own.
class CommandPasswordRecognizer(LogRecognizer):
    """``mysql -pPW``, ``sshpass -p PW``, ``redis-cli -a PW``, ``curl -u user:PW``, ``smbclient -U user%PW``."""

    ENTITY = "PASSWORD"
    NO_SWEEP = frozenset({"USER"})
    _ARGS = r"[^|;&\n]*?\s"
    PATTERNS = (
        ("mysql", rf"\b(?:mysql|mysqldump|mysqladmin|mariadb)\b{_ARGS}-p(?P<PASSWORD>[^\s\"'-][^\s\"']*)", 0.8),
        ("mysql quoted", rf"\b(?:mysql|mysqldump|mysqladmin|mariadb)\b{_ARGS}-p[\"'](?P<PASSWORD>[^\"']+)", 0.8),
        ("sshpass", r"\bsshpass\s+-p\s*[\"']?(?P<PASSWORD>[^\s\"']+)", 0.8),
        ("redis", rf"\bredis-cli\b{_ARGS}(?:-a|--pass)\s+[\"']?(?P<PASSWORD>[^\s\"']+)", 0.8),
        ("curl", rf"\b(?:curl|wget)\b{_ARGS}(?:-u|--user)[\s=]*[\"']?(?P<USER>[^\s:\"']+):(?P<PASSWORD>[^\s\"']+)", 0.8),
        ("wget", rf"\bwget\b{_ARGS}--(?:http-|ftp-)?password[=\s][\"']?(?P<PASSWORD>[^\s\"']+)", 0.8),
        (
            "smbclient",
            rf"\b(?:smbclient|smbmap|rpcclient|mount\.cifs)\b{_ARGS}-U\s*[\"']?(?P<USER>[^\s%\"']+)%(?P<PASSWORD>[^\s\"']+)",
            0.8,
        ),
        ("htpasswd", rf"\bhtpasswd\b{_ARGS}-b\S*\s+\S+\s+\S+\s+(?P<PASSWORD>[^\s\"']+)", 0.8),
        (
            "registry login",
            rf"\b(?:docker|podman|buildah|skopeo|helm(?: registry)?|oras|nerdctl)\s+login\b{_ARGS}(?:-p|--password)[=\s]+[\"']?"
            r"(?P<PASSWORD>[^\s\"']+)",
            0.8,
        ),
        ("netrc", r"\bmachine\s+\S+\s+login\s+(?P<USER>\S+)\s+password\s+(?P<PASSWORD>\S+)", 0.8),
    )
    PREFILTER = (
        r"\b(?:mysql|mysqldump|mysqladmin|mariadb|sshpass|redis-cli|curl|wget|smbclient|smbmap|rpcclient|mount\.cifs|htpasswd)\b",
        r"\blogin\b",
        r"\bmachine\s",
    )

    def invalidate_result(self, pattern_text: str) -> bool | None:
        """Keep references to variables and prompts (``-p`` alone asks for the password)."""
        return not is_value(pattern_text)


# Query parameters and connection-string fields that carry a credential (also URL-encoded).
_PARAMS = (
    r"sig|signature|x-goog-signature|x-amz-signature|x-amz-security-token|x-amz-credential|x-goog-credential|"
    r"token|access_token|refresh_token|id_token|auth|auth_token|api_key|apikey|key|code|client_secret|password|"
    r"secret|accountkey|sharedaccesskey|sharedaccesssignature|sas|session|sessionid|ticket"
)
# a %-escape that is not a separator (&, ;, space, comma, quotes, ?); malformed escapes are kept in the value
_PCT_VALUE = r"(?:[A-Za-z0-9._~+/*!-]|%(?!26|3[Bb]|2[0Cc]|22|27|3[Ff]))+=*"


class SignedUrlRecognizer(LogRecognizer):
    """Signatures and tokens in URLs and connection strings: ``sig=``, ``Signature=``, ``AccountKey%3D``."""

    ENTITY = "TOKEN"
    PATTERNS = (
        (
            "query parameter",
            rf"(?i)(?:[?&;]|%26|%3[Bb]|%3[Ff]|&amp;)(?:{_PARAMS})(?:=|%3[Dd])(?P<TOKEN>{_PCT_VALUE})",
            0.75,
        ),
    )
    PREFILTER = (rf"(?i)(?:[?&;]|%26|%3[Bb]|%3[Ff])(?:{_PARAMS})(?:=|%3[Dd])",)

    def invalidate_result(self, pattern_text: str) -> bool | None:
        """Keep empty and placeholder values, and short codes (``key=1``)."""
        return len(pattern_text) < 6 or not is_value(pattern_text)


class CookieRecognizer(LogRecognizer):
    """Every value of a ``Cookie:`` header, and the first of a ``Set-Cookie:`` (the rest are attributes)."""

    ENTITY = "TOKEN"
    PATTERNS = (("cookie", r"(?i)(?:\b|(?<=\\[rn]))(?P<set>set-)?cookie\s*:\s*(?P<pairs>[^\r\n'\"\\]+)", 0.75),)
    PREFILTER = (r"(?i)cookie\s*:",)
    _PAIR = re.compile(r"\s*([^=;\s]+)=([^;\s]*)")

    def spans(self, match: re.Match[str], groups: list[tuple[str, str]]) -> list[tuple[tuple[int, int], str]]:
        """The value of every cookie pair (``Set-Cookie``: the first pair only)."""
        out = []
        base = match.start("pairs")
        for pair in self._PAIR.finditer(match.group("pairs")):
            if len(pair.group(2)) >= 4 and is_value(pair.group(2)):
                out.append(((base + pair.start(2), base + pair.end(2)), self.entity))
            if match.group("set"):
                break
        return out


class AuthHeaderRecognizer(LogRecognizer):
    """``Authorization: Basic|Bearer|Token <value>`` anywhere, also after a literal ``\\r\\n`` of an HTTP dump."""

    ENTITY = "TOKEN"
    PATTERNS = (
        (
            "authorization",
            r"(?i)(?:\b|(?<=\\[rn]))(?:proxy-)?(?:authorization|x-api-key|api-key|x-auth-token|private-token)[\"']?\s*[:=]\s*[\"']?"
            rf"(?:(?:basic|bearer|token|digest|apikey|sso-key)\s+)?(?P<TOKEN>{VALUE}{{6,}})",
            0.8,
        ),
    )
    PREFILTER = (r"(?i)(?:authorization|x-api-key|api-key|x-auth-token|private-token)[\"']?\s*[:=]",)

    def invalidate_result(self, pattern_text: str) -> bool | None:
        """Keep placeholders and scheme names (``Authorization: Bearer`` with nothing after it)."""
        return not is_value(pattern_text) or pattern_text.lower() in {"basic", "bearer", "token", "digest", "required"}


class WebhookRecognizer(LogRecognizer):
    """Discord, Microsoft Teams and Telegram bot webhooks: the secret path goes, the service stays."""

    ENTITY = "TOKEN"
    PATTERNS = (
        ("discord", r"(?i)discord(?:app)?\.com/api/webhooks/[0-9]+/(?P<TOKEN>[A-Za-z0-9_-]{20,})", 0.9),
        ("teams", r"(?i)\.webhook\.office\.com/webhookb2/(?P<TOKEN>[^\s\"'<>]+)", 0.9),
        ("teams connector", r"(?i)outlook\.office(?:365)?\.com/webhook/(?P<TOKEN>[^\s\"'<>]+)", 0.9),
        ("telegram url", r"(?i)api\.telegram\.org/(?:file/)?bot(?P<TOKEN>[0-9]{5,12}:[A-Za-z0-9_-]{20,})", 0.9),
        ("telegram token", r"(?<![\w:/])(?P<TOKEN>[0-9]{8,10}:AA[A-Za-z0-9_-]{33})(?![\w-])", 0.85),
    )
    PREFILTER = (
        r"(?i)discord(?:app)?\.com/api/webhooks/",
        r"(?i)webhookb2/",
        r"(?i)office(?:365)?\.com/webhook/",
        r"(?i)api\.telegram\.org/",
        r"[0-9]{8,10}:AA[A-Za-z0-9_-]{33}",
    )
