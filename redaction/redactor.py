"""The streaming masker: lines in, masked lines out, with one pseudonym mapping per session."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator
from collections.abc import Set as AbstractSet
from functools import partial
from typing import TYPE_CHECKING, Any, cast

from redaction.addresses import IPV4_RE, is_anonymous_ip
from redaction.known import KnownValues, mask_hashed
from redaction.pem import BEGIN_RE, PemMasker
from redaction.placeholders import Pseudonyms, escape_literals, host_key
from redaction.prefilter import PEM_ID, UNSURE_ID, Prescan, Scan
from redaction.spans import resolve
from redaction.textbytes import decode, encode, lines_before
from redaction.unsure import Unsure, UnsureLog

if TYPE_CHECKING:
    from redaction.recognizers.base import LogRecognizer

STATE_VERSION = 1
_BATCH_CHARS = 1 << 18


class Redactor:
    """Masks one log (one session). Holds the pseudonym mapping in memory only.

    Feed it lines or newline-joined blocks of whole lines, in order; a private-key block may
    span calls. Masking never adds or removes a newline, and the result does not depend on
    where the input was cut into blocks.

    ``unsure`` lists values that look random but that no recognizer claimed (see
    :mod:`redaction.unsure`); ``export_state``/``from_state`` carry the placeholders over to a
    later session (a chat about the same log) without any raw value.
    """

    def __init__(self, *, use_hyperscan: bool = True) -> None:
        from redaction.engine import shared_engine  # presidio: imported on first use, not by ``import redaction``

        engine = shared_engine(use_hyperscan)
        self._recognizers = engine.recognizers
        self._block_ids = engine.block_ids
        self._prefilter = engine.prefilter
        self._scratch = engine.prefilter.new_scratch()
        self._max_window = engine.max_window
        self._pseudonyms = Pseudonyms()
        self._pem = PemMasker(self._new_key_placeholder)
        self._keys = 0
        self._tail: list[str] = []
        self._block_values: dict[bytes, bytes] = {}
        self._known = KnownValues(use_hyperscan=use_hyperscan)
        self._unsure = UnsureLog()
        self._lines_done = 0
        self._cite_issued = False

    @classmethod
    def from_state(cls, state: dict[str, Any], *, use_hyperscan: bool = True) -> Redactor:
        """A redactor that continues the session :meth:`export_state` described.

        A raw value the earlier session masked gets the same placeholder, wherever it stands
        (it is recognised by its keyed hash); new values get numbers after the existing ones.
        Placeholders that session issued, met in this one's input (a question citing
        ``<HOST_1>``), are kept as references instead of being escaped.
        """
        if state.get("version") != STATE_VERSION:
            raise ValueError(f"unsupported redactor state version: {state.get('version')!r}")
        redactor = cls(use_hyperscan=use_hyperscan)
        redactor._pseudonyms = Pseudonyms.from_state(state)
        redactor._keys = int(state.get("private_keys", 0))
        redactor._cite_issued = True
        return redactor

    def export_state(self) -> dict[str, Any]:
        """Return this session's placeholder state, JSON-safe and without raw values.

        Holds the per-session HMAC key, the numbers issued per type and every masked value as
        HMAC-SHA256(key, type + value): enough to give a value met again its placeholder, not
        to recover it (short values can be guessed by whoever holds the key; keep the state
        where the log's masked text is kept). Never holds ``unsure`` values.
        """
        return {"version": STATE_VERSION, "private_keys": self._keys, **self._pseudonyms.export_state()}

    @property
    def unsure(self) -> list[Unsure]:
        """Random-looking values left unmasked: ``Unsure(line_no, snippet)``, at most ``UnsureLog.LIMIT``.

        The snippet is masked text around the value *with the value in clear*, so the user can
        judge it on their own terminal. Print it there only: never log, store, send or cache it.
        """
        return list(self._unsure.items)

    @property
    def unsure_total(self) -> int:
        """How many unsure values were seen, including those beyond the list's limit."""
        return self._unsure.total

    @property
    def counts(self) -> dict[str, int]:
        """Masks applied so far, by type, e.g. ``{"HOST": 2, "TOKEN": 1}``."""
        return dict(self._pseudonyms.counts)

    def redact_line(self, line: str) -> str:
        """Mask one line (no trailing newline)."""
        return self.redact_text(line)

    def redact_lines(self, lines: Iterable[str]) -> Iterator[str]:
        """Mask lines lazily, in batches, yielding one masked line (without newline) per input line."""
        batch: list[str] = []
        size = 0
        for line in lines:
            line = line.removesuffix("\n")
            if "\n" in line:
                yield from self._flush(batch)
                batch, size = [], 0
                yield self.redact_text(line)
                continue
            batch.append(line)
            size += len(line)
            if size >= _BATCH_CHARS:
                yield from self._flush(batch)
                batch, size = [], 0
        yield from self._flush(batch)

    def _flush(self, batch: list[str]) -> Iterator[str]:
        """Mask a batch of lines as one block and split it back."""
        if batch:
            yield from self.redact_text("\n".join(batch)).split("\n")

    def redact_text(self, text: str | Prescan) -> str:
        """Mask a block of whole lines joined by ``\\n``; call in order on consecutive blocks.

        Placeholder-shaped text already in the input keeps its number for itself (new
        placeholders skip it) or, if this session issued that number before, is escaped
        (``<_HOST_1>``), so a placeholder in the output always means what this session meant.
        A :class:`Prescan` of the block (:meth:`prescan`, maybe made on another thread) saves its scan.
        """
        scanned = text if isinstance(text, Prescan) else None
        text = scanned.text if scanned is not None else cast(str, text)
        self._pseudonyms.reserve_literals(text)
        raw = text
        if not self._cite_issued:
            text = escape_literals(text, self._pseudonyms)
        if scanned is not None and text is raw:
            data, scan = scanned.data, scanned.scan
        else:  # no scan made, or escaping changed the text it was made of
            data = encode(text)
            scan = self._prefilter.scan(data, self._scratch)
        masked = self._known.sweep(self._mask_block(data, scan), self._pseudonyms.placeholder)
        self._lines_done += text.count("\n") + 1
        out = text if masked is data else decode(masked)
        return mask_hashed(out, self._pseudonyms) if self._pseudonyms.hashed else out

    def sweep_known(self, masked: str) -> str:
        """Mask, in text this session already returned, the values it learned only later in the log.

        Streaming masks a value from the moment a recognizer finds it (``/home/dfischer`` on line
        900); an earlier bare ``dfischer`` on line 12 was returned before that. Callers that keep
        masked text sweep it once more at the end. Placeholders are left as they are.
        """
        data = encode(masked)
        swept = self._known.sweep(data, self._pseudonyms.placeholder)
        return masked if swept is data else decode(swept)

    def prescan(self, text: str, scratch: Any) -> Prescan:
        """The prefilter's candidate lines of ``text``; touches no session state, so any thread may run it (own ``scratch``)."""
        data = encode(text)
        return Prescan(text, data, self._prefilter.scan(data, scratch))

    def new_scratch(self) -> Any:
        """A scan workspace for :meth:`prescan` on one other thread."""
        return self._prefilter.new_scratch()

    def _mask_block(self, data: bytes, scan: Scan) -> bytes:
        """Mask the candidate lines, launcher prefixes and private-key blocks of ``data``."""
        candidates, block_lines = scan
        sub_blocks = self._sub_blocks if block_lines else bytes  # bytes(b) is b: no launcher prefix to mask
        tail = self._tail
        if self._max_window:
            self._tail = (tail + data[-4096:].decode("utf-8", "replace").split("\n"))[-self._max_window :]
        if not candidates and not self._pem.active:
            return sub_blocks(data)
        out: list[bytes] = []
        line_no = counted = 0  # newlines in data[:counted], for the line numbers of unsure values
        pos = self._continue_pem(data, out, 0) if self._pem.active else 0
        for start in sorted(candidates):
            if start < pos:
                continue
            end, ids = candidates[start]
            out.append(sub_blocks(data[pos:start]))
            line = decode(data[start:end])
            pos = end
            ids = ids | self._block_ids
            if PEM_ID in ids and self._pem.begin_in(line):
                # the text before the BEGIN marker is an ordinary line: mask it with its recognizers
                begin = BEGIN_RE.search(line)
                head = line[: begin.start()] if begin else ""
                keyed = self._pem.mask(line) or line
                context: Callable[[int], str] = partial(lines_before, data, start, tail=tail)
                masked_head = self._mask_line(head, ids, context) if head.strip() else head
                out.append(encode(masked_head + keyed[len(head) :]))
                if self._pem.active:
                    out.append(data[pos : pos + 1])
                    pos = self._continue_pem(data, out, pos + 1)
                continue
            masked = self._mask_line(line, ids, partial(lines_before, data, start, tail=tail))
            if UNSURE_ID in ids:
                line_no += data.count(b"\n", counted, start)
                counted = start
                self._unsure.check(masked, self._lines_done + line_no + 1)
            out.append(encode(masked))
        out.append(sub_blocks(data[pos:]))
        return b"".join(out)

    def _sub_blocks(self, data: bytes) -> bytes:
        """Mask the launcher prefixes in lines that hold nothing else to mask."""
        for rid in self._block_ids:
            data = self._recognizers[rid].sub_block(data, partial(self._block_placeholder, self._recognizers[rid]))
        return data

    def _block_placeholder(self, recognizer: LogRecognizer, value: bytes) -> bytes:
        """Return the placeholder for a value a block-level recognizer found (or the value if invalid)."""
        masked = self._block_values.get(value)
        if masked is None:
            text = value.decode("utf-8", "surrogatepass")
            valid = not recognizer.invalidate_result(text)
            masked = self._pseudonyms.lookup(recognizer.entity, text).encode() if valid else value
            self._block_values[value] = masked
            if valid:
                self._known.add(recognizer.entity, text)
        if masked is not value:
            self._pseudonyms.counts[recognizer.entity] += 1
        return masked

    def _continue_pem(self, data: bytes, out: list[bytes], pos: int) -> int:
        """Mask the lines of an open private-key block from ``pos``; return where it stopped."""
        while self._pem.active and pos <= len(data):
            stop = data.find(b"\n", pos)
            stop = len(data) if stop < 0 else stop
            masked = self._pem.mask(decode(data[pos:stop]))
            if masked is None:
                return pos
            out.append(encode(self._mask_prefix(masked)))
            out.append(data[stop : stop + 1])
            pos = stop + 1
        return pos

    def _mask_prefix(self, line: str) -> str:
        """Mask a launcher prefix on a line that bypasses :meth:`_mask_line` (private-key lines)."""
        return self._mask_line(line, self._block_ids, lambda n: "")

    def _mask_line(self, line: str, ids: AbstractSet[int], context: Callable[[int], str]) -> str:
        """Mask one candidate line with the recognizers the prefilter chose for it.

        ``context(n)`` returns the ``n`` raw lines before this one (with their newlines), for
        recognizers whose matches may start on an earlier line.
        """
        results: list[Any] = []
        for rid in ids:
            if rid < 0:
                continue
            recognizer = self._recognizers[rid]
            if not recognizer.window:
                results.extend((r.start, r.end, r.entity_type, r.score, rid) for r in recognizer.analyze(line, None))
                continue
            before = context(recognizer.window)
            shift = len(before)
            results.extend(
                (max(r.start - shift, 0), r.end - shift, r.entity_type, r.score, rid)
                for r in recognizer.analyze(before + line, None)
                if r.end > shift
            )
        pieces: list[str] = []
        pos = 0
        for span in resolve(results, line):
            entity, value = span.entity, span.value
            if entity == "HOST" and IPV4_RE.match(value):
                entity = "IP"
            if entity == "IP" and is_anonymous_ip(value):
                continue
            pieces.append(line[pos : span.start])
            pieces.append(self._pseudonyms.placeholder(entity, value))
            if entity not in self._recognizers[span.source].NO_SWEEP:
                self._known.add(entity, value)
                if entity == "HOST" and (label := host_key(value)) != value.lower():
                    self._known.add(entity, label)
            pos = span.end
        pieces.append(line[pos:])
        return "".join(pieces)

    def _new_key_placeholder(self) -> str:
        """Return a fresh placeholder for a new private-key block."""
        self._keys += 1
        return self._pseudonyms.placeholder("PRIVATE_KEY", f"\0block{self._keys}")
