"""What the server's logs may hold: request lines without session ids (a session's only key) or query strings."""

from __future__ import annotations

import logging
import re

_SESSION = re.compile(r"(/api/sessions/)[^/?#\s]+")
ACCESS_LOGGER = "uvicorn.access"


def scrub_path(path: str) -> str:
    """The path as logged: no query string, ``/api/sessions/<id>`` for any session id."""
    return _SESSION.sub(r"\1<id>", path.split("?", 1)[0])


class AccessLogFilter(logging.Filter):
    """Rewrites uvicorn's access records (client, method, path, version, status): the path is scrubbed."""

    def filter(self, record: logging.LogRecord) -> bool:
        """Scrub the path argument; never drops a record."""
        args = record.args
        if isinstance(args, tuple) and len(args) >= 3 and isinstance(args[2], str):
            record.args = (*args[:2], scrub_path(args[2]), *args[3:])
        return True


def install_access_filter() -> None:
    """Add the filter to uvicorn's access logger once per process."""
    logger = logging.getLogger(ACCESS_LOGGER)
    if not any(isinstance(f, AccessLogFilter) for f in logger.filters):
        logger.addFilter(AccessLogFilter())
