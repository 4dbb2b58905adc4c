"""Text to bytes and back without loss (lone surrogates from undecodable input survive), and the raw
lines before an offset: what the redactor needs to scan bytes and mask text."""

from __future__ import annotations


def decode(raw: bytes) -> str:
    """Bytes back to the exact text they came from."""
    return raw.decode("utf-8", "surrogatepass")


def encode(text: str) -> bytes:
    """Text to bytes, keeping lone surrogates (from undecodable input) intact."""
    return text.encode("utf-8", "surrogatepass")


def lines_before(data: bytes, start: int, lines: int, tail: list[str]) -> str:
    """Return up to ``lines`` raw lines before offset ``start``, reaching into ``tail`` (the lines before ``data``)."""
    begin = start
    while lines and begin > 0:
        begin = data.rfind(b"\n", 0, begin - 1) + 1
        lines -= 1
    before = decode(data[begin:start])
    if lines and tail:
        before = "\n".join(tail[-lines:]) + "\n" + before
    return before
