"""Values already masked in a session, swept out wherever else they appear.

A recognizer finds ``dfischer`` in ``/home/dfischer/...`` or ``h100-sxm-141`` in a launcher
prefix; the same strings then leak from places no pattern describes (``s3://runs/dfischer/``,
``pdsh -w h100-sxm-141,h100-sxm-142``, a dict of host names). After each block is masked,
one Hyperscan pass finds the remaining bare occurrences of every value seen so far and masks
them with the same placeholder.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import TYPE_CHECKING, cast

if TYPE_CHECKING:
    from redaction.placeholders import Pseudonyms

try:
    import hyperscan
except ImportError:  # pragma: no cover - depends on the platform's wheels
    hyperscan = None  # type: ignore[assignment]  # the pure-Python path is used then

# Shortest value worth sweeping, by type; types not listed are never swept.
_MIN_LENGTH = {"HOST": 4, "USER": 4, "EMAIL": 6, "BUCKET": 6, "TOKEN": 8, "PASSWORD": 8, "JOB": 8, "NAMESPACE": 6}
_CASELESS = frozenset({"HOST", "EMAIL", "BUCKET"})
# Common words that are sometimes user or host names; sweeping them would mask prose.
_STOPWORDS = frozenset(
    {"root", "ubuntu", "admin", "user", "users", "home", "data", "test", "train", "model", "shared", "guest", "runner", "local"}
)
_MAX_VALUES = 10_000
# Hyperscan refuses literals much longer than this ("Pattern length exceeds limit"); longer
# values (a 16 KB token) are found with ``bytes.find`` instead.
_MAX_LITERAL = 1000
# New values go to a small matcher rebuilt on every change (about 1 ms); once this many
# wait, everything is merged into the main matcher (about 5 ms per 300 values).
_MERGE_AT = 64
_WORD = frozenset(b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_-")


class KnownValues:
    """The values masked so far in one session, with a matcher for their bare occurrences."""

    def __init__(self, *, use_hyperscan: bool = True) -> None:
        self._entities: dict[str, str] = {}
        self._use_hyperscan = use_hyperscan and hyperscan is not None
        self._matcher: _Matcher | None = None
        self._recent: _Matcher | None = None
        self._pending: list[str] = []

    def add(self, entity: str, value: str) -> None:
        """Remember a masked value (if it is long and specific enough to sweep safely)."""
        floor = _MIN_LENGTH.get(entity)
        if floor is None or len(value) < floor or value in self._entities or len(self._entities) >= _MAX_VALUES:
            return
        if value.lower() in _STOPWORDS or value.isupper() or "\n" in value:
            return
        self._entities[value] = entity
        self._pending.append(value)
        self._recent = None

    def sweep(self, data: bytes, placeholder: Callable[[str, str], str]) -> bytes:
        """Replace bare occurrences of known values in UTF-8 ``data`` with their placeholders."""
        if not self._entities:
            return data
        if len(self._pending) >= _MERGE_AT:
            self._matcher = _Matcher(self._entities, list(self._entities), use_hyperscan=self._use_hyperscan)
            self._pending, self._recent = [], None
        if self._pending and self._recent is None:
            self._recent = _Matcher(self._entities, self._pending, use_hyperscan=self._use_hyperscan)
        spans = [span for matcher in (self._matcher, self._recent) if matcher is not None for span in matcher.find(data)]
        if not spans:
            return data
        spans.sort(key=lambda span: (span[0], -span[1]))
        out: list[bytes] = []
        pos = 0
        for start, end, value in spans:
            if start < pos or (start and data[start - 1] in _WORD) or (end < len(data) and data[end] in _WORD):
                continue
            if (start and data[start - 1] == 0x2E) or (end + 1 < len(data) and data[end] == 0x2E and data[end + 1] in _WORD):
                continue
            out.append(data[pos:start])
            out.append(placeholder(self._entities[value], value).encode())
            pos = end
        out.append(data[pos:])
        return b"".join(out)


class _Matcher:
    """A multi-literal matcher over some known values (Hyperscan, or one Python regex)."""

    def __init__(self, entities: dict[str, str], values: list[str], *, use_hyperscan: bool) -> None:
        self._long = [v for v in values if len(_encode(v)) > _MAX_LITERAL]
        self._values = [v for v in values if len(_encode(v)) <= _MAX_LITERAL]
        self._db = None
        if not self._values:
            return
        if use_hyperscan:
            self._db = hyperscan.Database(mode=hyperscan.HS_MODE_BLOCK)
            # Literals have a fixed length, so the match start needs no (costly) SOM tracking.
            flags = [hyperscan.HS_FLAG_CASELESS if entities[v] in _CASELESS else 0 for v in self._values]
            self._lengths = [len(_encode(v)) for v in self._values]
            self._db.compile(
                expressions=[_encode(v) for v in self._values],
                ids=list(range(len(self._values))),
                elements=len(self._values),
                flags=flags,
                literal=True,
            )
            self._scratch = hyperscan.Scratch(self._db)
        else:
            longest_first = sorted(self._values, key=len, reverse=True)
            self._regex = re.compile(b"|".join(re.escape(_encode(v)) for v in longest_first), re.IGNORECASE)
            self._by_lower = {v.lower(): v for v in reversed(longest_first)}
            self._caseless = {v for v in self._values if entities[v] in _CASELESS}

    def find(self, data: bytes) -> list[tuple[int, int, str]]:
        """Return ``(start, end, value)`` of every occurrence, in no particular order."""
        hits: list[tuple[int, int, int]] = []
        found = _find_long(data, self._long)
        if not self._values:
            return found
        if self._db is not None:
            self._db.scan(data, match_event_handler=_collect, context=hits, scratch=self._scratch)
            found += [(end - self._lengths[i], end, self._values[i]) for i, _, end in hits]
        else:
            for match in self._regex.finditer(data):
                text = match.group().decode("utf-8", "surrogatepass")
                value = self._by_lower.get(text.lower())
                if value is not None and (value == text or value in self._caseless):
                    found.append((match.start(), match.end(), value))
        return found


def _find_long(data: bytes, values: list[str]) -> list[tuple[int, int, str]]:
    """Every occurrence of each (long) value, case-sensitively."""
    found = []
    for value in values:
        raw = _encode(value)
        pos = data.find(raw)
        while pos >= 0:
            found.append((pos, pos + len(raw), value))
            pos = data.find(raw, pos + len(raw))
    return found


def _encode(text: str) -> bytes:
    """Text to bytes, keeping lone surrogates (from undecodable input) intact."""
    return text.encode("utf-8", "surrogatepass")


def _collect(pattern_id: int, start: int, end: int, flags: int, hits: object) -> None:
    """Hyperscan match callback: remember which value matched where (``hits`` is the scan's list)."""
    cast("list[tuple[int, int, int]]", hits).append((pattern_id, start, end))


# A word that may be a value an earlier session masked: host, user, e-mail, token.
_WORD_RE = re.compile(r"(?<![<\w.@+%-])[A-Za-z0-9_][A-Za-z0-9._@+%-]*[A-Za-z0-9_]")


def mask_hashed(text: str, pseudonyms: Pseudonyms) -> str:
    """Mask words an earlier session masked, known here only by their keyed hashes."""
    found = sweep_hashed(text, pseudonyms.known_number, list(pseudonyms.hashed))
    if not found:
        return text
    pieces, pos = [], 0
    for start, end, entity in found:
        pieces.append(text[pos:start])
        pieces.append(pseudonyms.placeholder(entity, text[start:end]))
        pos = end
    pieces.append(text[pos:])
    return "".join(pieces)


def sweep_hashed(text: str, number_of: Callable[[str, str], int | None], entities: list[str]) -> list[tuple[int, int, str]]:
    """Find words an earlier session masked, knowing them only by keyed hash.

    ``number_of(entity, word)`` answers from the hashes (see ``Pseudonyms.known_number``).
    Returns ``(start, end, entity)`` of each word found, in order; a host is also tried by its
    first label (``kestrel`` in ``kestrel.cluster.internal``). The same floors and stop words
    as for known values apply, so a short password cannot mask a common word.
    """
    floors = {entity: _MIN_LENGTH.get(entity, 7) for entity in entities if entity in _MIN_LENGTH or entity == "IP"}
    found = []
    for match in _WORD_RE.finditer(text):
        word = match.group()
        if word.lower() in _STOPWORDS:
            continue
        for entity, floor in floors.items():
            if len(word) >= floor and number_of(entity, word) is not None:
                found.append((match.start(), match.end(), entity))
                break
            label = word.split(".", 1)[0]
            if entity == "HOST" and label != word and len(label) >= floor and number_of(entity, label) is not None:
                found.append((match.start(), match.start() + len(label), entity))
                break
    return found
