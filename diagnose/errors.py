"""The error tree. Library code raises these; only the CLI and the web app print them.

DiagnoseError
 ├── InputError          bad, empty, binary or unreadable log input
 ├── ConfigError         a setting is wrong
 │    └── MissingKeyError   a configured model needs a key that is not set
 ├── LLMError
 │    └── LLMUnavailable    the model could not be reached (after retries)
 └── KBError             the encyclopedia or its index is broken
"""

from __future__ import annotations


class DiagnoseError(Exception):
    """Base of every error this package raises on purpose."""

    exit_code = 2
    status = 400


class InputError(DiagnoseError):
    """The log input cannot be read: missing, empty, binary, or not text."""


class ConfigError(DiagnoseError):
    """A setting or the config file is wrong."""


class MissingKeyError(ConfigError):
    """The configured model needs an API key that is not set."""


class LLMError(DiagnoseError):
    """Talking to the model failed."""

    status = 502


class LLMUnavailable(LLMError):
    """The model could not be reached, even after retries."""


class KBError(DiagnoseError):
    """The encyclopedia is malformed or an entry is missing."""

    status = 404
