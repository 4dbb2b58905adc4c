"""Credentials: bearer tokens, JWTs, passwords in URLs, secrets after key words, known formats."""

from __future__ import annotations

import re

from redaction.recognizers.base import LogRecognizer, shannon_entropy

# Characters of a token value; stops at quotes, brackets, commas, semicolons and spaces.
_VALUE = r"[^\s\"'`,;{}()\[\]<>|\\]"
# A value of eight or more such characters that does not end with a sentence's full stop.
_SECRET_VALUE = rf"{_VALUE}{{8,}}(?<!\.)"
# Values that are placeholders or words, not secrets.
_NOT_SECRET = re.compile(
    r"(?i)^(?:true|false|none|null|nil|undefined|required|optional|redacted|hidden|masked|"
    r"changeme|your[_-].*|x+|\*+|\.+|-+|\$\{?\w+\}?|%\(?\w+\)?s?|\{\{.*|<.*|os\.environ.*|env\..*)$"
)
_DOTTED_NAME = re.compile(r"^[A-Za-z_][a-z0-9_]*(?:\.(?:[A-Za-z_][a-z0-9_]*|[0-9]+))+$")
_NUMBER = re.compile(r"^[0-9.,:eE+-]+$")
# A file-system path: lower-case segments (random base64 has upper case and ``+``).
_PATH = re.compile(r"^(?:~|\.{1,2})?/[a-z0-9_.@-]*(?:/[a-z0-9_.@-]*)*$")
_SNAKE_CASE = re.compile(r"^[a-z]+(?:_[a-z]+)*(?:_?[0-9]{1,3})?$")
_FILE_NAME = re.compile(
    r"(?i)\.(?:safetensors|bin|pt|pth|ckpt|json|jsonl|ya?ml|txt|py|log|arrow|parquet|csv|tar|gz|zip|"
    r"so|h5|onnx|model|md|whl|sh|cfg|toml|ini)$"
)


def looks_secret(value: str, *, min_length: int = 8) -> bool:
    """Tell whether ``value`` reads like a credential rather than a word, number or name."""
    if len(value) < min_length or _NOT_SECRET.match(value) or _NUMBER.match(value):
        return False
    if _DOTTED_NAME.match(value) or _FILE_NAME.search(value) or _SNAKE_CASE.match(value):
        return False
    if value.startswith(("http://", "https://")) or _PATH.match(value):
        return False
    has_digit = any(c.isdigit() for c in value)
    has_alpha = any(c.isalpha() for c in value)
    mixed_case = any(c.isupper() for c in value) and any(c.islower() for c in value)
    if not has_alpha:
        return False
    if has_digit:
        return shannon_entropy(value) >= 2.5
    return mixed_case and len(value) >= 24 and shannon_entropy(value) >= 4.0


class SecretValueRecognizer(LogRecognizer):
    """A recognizer whose masked values must read like credentials."""

    def validate_result(self, pattern_text: str) -> bool | None:
        """Accept only values that look random (entropy, digits, mixed case)."""
        return None if looks_secret(pattern_text) else False


class BearerRecognizer(SecretValueRecognizer):
    """``Authorization: Bearer <token>``, ``Basic``, ``token`` schemes."""

    ENTITY = "TOKEN"
    PATTERNS = (
        ("bearer", r"(?i)\bbearer\s+(?P<TOKEN>[A-Za-z0-9._~+/-]{8,}=*)", 0.8),
        (
            "authorization",
            rf"(?i)\b(?:proxy-)?authorization[\"']?\s*[:=,]\s*[\"']?(?:basic|token|bearer|digest)?\s*"
            rf"(?P<TOKEN>{_VALUE}{{8,}})",
            0.8,
        ),
    )
    PREFILTER = (r"(?i)bearer\s", r"(?i)authorization")


class JwtRecognizer(LogRecognizer):
    """JSON Web Tokens: three base64url parts, the first two JSON objects."""

    ENTITY = "TOKEN"
    PATTERNS = (("jwt", r"\beyJ[A-Za-z0-9_-]{8,}\.eyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}", 0.9),)
    PREFILTER = (r"eyJ[A-Za-z0-9_-]{8,}\.eyJ",)


class UrlCredentialsRecognizer(LogRecognizer):
    """``scheme://user:password@host``: the user and the password go, the structure stays."""

    ENTITY = "PASSWORD"
    NO_SWEEP = frozenset({"USER"})
    PATTERNS = (
        (
            "userinfo",
            r"(?i)\b[a-z][a-z0-9+.-]{0,20}://(?P<USER>[^\s:@/'\"<>]*):(?P<PASSWORD>[^\s/'\"<>]+)@(?=[A-Za-z0-9\[])",
            0.9,
        ),
        ("user only", r"(?i)\b(?:https?|ssh|git|ftp|sftp)://(?P<USER>[^\s:@/'\"<>]+)@(?=[A-Za-z0-9\[])", 0.7),
    )
    PREFILTER = (r"(?i)://[^\s/@]*@",)

    def invalidate_result(self, pattern_text: str) -> bool | None:
        """Keep generic forge users such as ``git``."""
        return pattern_text.lower() in {"git"}


# Words after which a value is a credential (as in gitleaks' generic rule).
KEY_WORDS = (
    r"(?:api[_ .-]?key|apikey|access[_-]?key(?:[_-]?id)?|secret|passw(?:or)?d|\bpwd|passphrase|"
    r"token|credentials?|auth[_-]?key|private[_-]?key|client[_-]?secret|\bkey|[a-z0-9]key|\bauth)"
)


class KeywordSecretRecognizer(SecretValueRecognizer):
    """A high-entropy value after key/token/secret/password/auth words (``KEY=...``, ``--token X``)."""

    ENTITY = "TOKEN"
    PATTERNS = (
        (
            "assignment",
            rf"(?i){KEY_WORDS}[\w.-]*(?<!error)(?<!exception)(?<!warning)[\"'\]]*\s*(?:=|:|=>|:=)\s*[\"'`]?\s*"
            rf"(?P<TOKEN>{_SECRET_VALUE})",
            0.6,
        ),
        (
            "argument",
            rf"(?i)(?:\b|[_-])(?:api[ _-]?key|key|token|password|passwd|secret|login)\s+(?P<TOKEN>{_SECRET_VALUE})",
            0.6,
        ),
    )
    PREFILTER = (
        rf"(?i){KEY_WORDS}[\w.-]*[\"'\]]*\s*(?:=|:|=>|:=)",
        r"(?i)(?:key|token|password|passwd|secret|login)\s",
    )


class WandbKeyRecognizer(LogRecognizer):
    """A 40-hex W&B API key on a line that talks about W&B or API keys (not a git SHA)."""

    ENTITY = "TOKEN"
    PATTERNS = (("wandb key", r"(?<![0-9A-Za-z])[0-9a-f]{40}(?![0-9A-Za-z])", 0.7),)
    PREFILTER = (r"(?i)wandb|api[_ -]?key",)
    _CONTEXT = re.compile(r"(?i)wandb|api[_ -]?key")

    def invalidate_context(self, text: str, start: int, end: int, entity: str) -> bool:
        """Require W&B or API-key words on the line."""
        return not self._CONTEXT.search(text)


class KnownTokenRecognizer(LogRecognizer):
    """Provider formats with a fixed prefix that need no key word around them."""

    ENTITY = "TOKEN"
    PATTERNS = (
        ("huggingface", r"\bhf_[A-Za-z0-9]{30,40}\b", 0.95),
        ("huggingface org", r"\bapi_org_[A-Za-z0-9]{30,40}\b", 0.95),
        ("openai", r"\bsk-(?:proj-|svcacct-|admin-|None-)?[A-Za-z0-9_-]{20,}", 0.9),
        ("anthropic", r"\bsk-ant-(?:api|admin)[0-9]{2}-[A-Za-z0-9_-]{80,}", 0.95),
        ("github", r"\b(?:ghp|gho|ghu|ghs|ghr)_[A-Za-z0-9]{36,255}\b|\bgithub_pat_[A-Za-z0-9_]{22,255}", 0.95),
        ("gitlab", r"\bglpat-[A-Za-z0-9_-]{20,}", 0.95),
        ("aws access key", r"\b(?:A3T[A-Z0-9]|AKIA|ASIA|ABIA|ACCA)[A-Z2-7]{16}\b", 0.95),
        ("aws session token", r"\bIQoJb3JpZ2luX2Vj[A-Za-z0-9/+=]{20,}", 0.95),
        ("google oauth", r"\bya29\.[A-Za-z0-9_-]{20,}", 0.95),
        ("google api key", r"\bAIza[A-Za-z0-9_-]{35}\b", 0.95),
        ("slack token", r"\bxox[abposr]-[A-Za-z0-9-]{10,}", 0.95),
        ("slack webhook", r"https://hooks\.slack\.com/(?:services|workflows|triggers)/[A-Za-z0-9+/_-]{20,}", 0.95),
        ("npm", r"\bnpm_[A-Za-z0-9]{36}\b", 0.95),
        ("pypi", r"\bpypi-AgEIcHlwaS5vcmc[A-Za-z0-9_-]{50,}", 0.95),
        ("artifactory", r"\bAKCp[A-Za-z0-9]{60,}", 0.9),
        ("fly.io", r"\bFlyV1 [A-Za-z0-9_+/=,]{40,}", 0.95),
    )
    PREFILTER = (
        r"hf_|api_org_|sk-|gh[pousr]_|github_pat_|glpat-|A3T|AKIA|ASIA|ABIA|ACCA|IQoJb3JpZ2luX2Vj|ya29\.|AIza|"
        r"xox[abposr]-|hooks\.slack\.com|npm_|pypi-AgEI|AKCp|FlyV1 ",
    )
