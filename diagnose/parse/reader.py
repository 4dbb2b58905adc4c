"""Read sources as a stream: mask each chunk, scan it once, keep events and findings, bounded.

Memory stays bounded whatever the log size: findings are kept per (entry, signature, rank) up to a few each and
counted beyond; lines are kept whole only for small logs, else as windows around what matched.
"""

from __future__ import annotations

from collections import defaultdict, deque
from collections.abc import Callable, Iterable
from itertools import tee
from typing import Protocol

from diagnose.parse.events import LAUNCHER_EXCEPTION, child_failed_block, collect_traceback, ignored_exception, line_event, traceback_event
from diagnose.parse.hard_wrap import Unwrapper
from diagnose.parse.ingest import Chunk, Source, cut_long_lines, read_chunks
from diagnose.parse.late_values import sweep_late_values
from diagnose.parse.launch_facts import record_bus, record_launch
from diagnose.parse.lines import make_line
from diagnose.parse.node_hints import drop_node_hints
from diagnose.parse.parsed_log import FindingGroup, ParsedLog
from diagnose.parse.rank_census import RankCensus
from diagnose.parse.recent_stamps import RecentStamps
from diagnose.parse.record_ranks import read_failure_records
from diagnose.parse.roles import assign_roles
from diagnose.parse.runs import keep_last_run
from diagnose.parse.scanner import Scanner
from diagnose.parse.sources import masked_name, ordered_sources
from diagnose.parse.structural import EXAMPLES, STRUCTURAL
from diagnose.parse.timestamps import YEARLESS, iso_year, rebase_log
from diagnose.parse.wrapped import WrappedMessages
from diagnose.schema import Event, Finding, LogLine, Redactions
from diagnose.settings import user_dir
from redaction.readahead import Prescanning, redact_ahead

KEEP_ALL_LINES = 200_000
KEEP_PER_KEY = 3
KEEP_LATEST = 3
MAX_EVENTS_PER_KEY = 4
WINDOW = 3
YEAR_SEARCH_CHARS = 64 * 1024


class SignatureMatcher(Protocol):
    """What the reader needs from the encyclopedia's signatures (``diagnose.engine.signatures.SignatureRules``)."""

    patterns: list[str]
    examples: list[list[str]]

    def finding(self, index: int, line: LogLine, order: int) -> Finding | None:
        """The finding of pattern ``index`` on a line the scanner matched, or None when it does not apply."""
        ...


class _Redactor(Prescanning, Protocol):
    """The subset of ``redaction.Redactor`` the reader uses."""

    @property
    def counts(self) -> dict[str, int]:
        """Masks applied so far, by type."""
        ...

    def redact_line(self, line: str) -> str: ...
    def sweep_known(self, masked: str) -> str: ...


class LogReader:
    """Accumulates one log (one or more sources) into a ParsedLog."""

    def __init__(self, rules: SignatureMatcher, redactor: _Redactor, progress: Callable[[int], None] | None = None) -> None:
        self.rules = rules
        self.redactor = redactor
        self.progress = progress
        self.scanner = Scanner(
            list(STRUCTURAL.values()) + rules.patterns, cache_dir=user_dir() / "cache", examples=[*EXAMPLES, *rules.examples]
        )
        self.kinds = list(STRUCTURAL)
        self._wrapped = WrappedMessages(self.scanner, rules, self.kinds.index("error_line"), len(self.kinds))
        self.log = ParsedLog()
        self._census = RankCensus()
        self._kept: dict[tuple[str, str, int | None], int] = {}
        self._latest: dict[tuple[str, str, int | None], deque[int]] = {}
        self._groups: dict[tuple[str, str], FindingGroup] = {}
        self._group_ranks: dict[tuple[str, str], set[int]] = {}
        self._event_keys: dict[tuple[str, int | None, bool], int] = {}
        self._excerpt_keys: set[tuple[str, int]] = set()
        self._years: set[int] = set()
        self._dated: set[str] = set()
        self._replaced = 0
        self._run_starts: dict[str, list[int]] = defaultdict(list)
        self._reports: dict[str, list[tuple[int, int]]] = defaultdict(list)  # per source: (first, last) line of each report read
        self._ignored: dict[str, tuple[int, int]] = {}  # per source: (first, last) line of the latest exception Python let go
        self._unwrapper = Unwrapper(redactor.redact_line, self.log.notes)

    def read(self, sources: Iterable[Source]) -> ParsedLog:
        """Read every source in order and return the ParsedLog."""
        for index, (source, rank_hint, host_hint) in enumerate(ordered_sources(list(sources), self.redactor)):
            name = masked_name(source.name, self.redactor)
            self.log.sources.append(name)
            if rank_hint is not None:
                self.log.rank_hints[name] = rank_hint
            kept: list[str] | None = [] if self.log.complete else None
            chunks, texts = tee(read_chunks(source))
            for chunk, text in zip(chunks, redact_ahead(self.redactor, (c.text for c in texts)), strict=True):
                kept = self._chunk(chunk, text, index, (name, rank_hint, host_hint), kept)
            if kept is not None:
                self.log.lines[name] = kept
        return self._finish()

    def _chunk(
        self, chunk: Chunk, text: str, index: int, where: tuple[str, int | None, str | None], kept: list[str] | None
    ) -> list[str] | None:
        """Take one masked chunk (``text``) of the source ``where`` names: (masked name, rank hint, host hint)."""
        name = where[0]
        self._replaced += chunk.replaced_bytes
        if name not in self._dated:  # a chunk's head tells its year; a dated source's later chunks add none earlier
            year = iso_year(text, YEAR_SEARCH_CHARS)
            if year is not None:
                self._years.add(year)
                self._dated.add(name)
        self.log.has_text = self.log.has_text or (not text.isspace() and bool(text))
        self.log.line_count += chunk.line_total
        self.log.byte_count += len(chunk.text) + 1
        if self.progress:
            self.progress(len(chunk.text) + 1)
        self._census.add(text, name)
        text, shown, pieces = self._unwrapper.chunk(name, chunk.text, text)  # a terminal's hard wrap: each line read whole
        # a big log's chunk is split into lines only when a pattern matched in it: most match nothing
        lines = cut_long_lines(text.split("\n")) if kept is not None else None
        hits = self.scanner.scan(text, lines)
        if hits or self._wrapped.pending:  # a message at the end of the last chunk may go on in this one
            lines = lines if lines is not None else cut_long_lines(text.split("\n"))
            self._hits(hits, lines, (index, chunk.first_line), where, excerpts=kept is None, pieces=frozenset(pieces))
        if kept is not None and lines is not None:
            if pieces:
                self.log.pieces.setdefault(name, set()).update(len(kept) + 1 + j for j in pieces)
            kept.extend(cut_long_lines(shown) if shown is not None else lines)
            if self.log.line_count > KEEP_ALL_LINES:
                self._drop_kept_lines()
                return None
        return kept

    def _hits(
        self,
        hits: list[tuple[int, int]],
        lines: list[str],
        at: tuple[int, int],
        where: tuple[str, int | None, str | None],
        *,
        excerpts: bool,
        pieces: frozenset[int],
    ) -> None:
        """Read the lines of a chunk where patterns matched; ``at`` is (source index, first line number)."""
        (index, first), (name, rank_hint, host_hint) = at, where
        made: dict[int, LogLine] = {}

        def make(i: int) -> LogLine:
            if i not in made:
                made[i] = make_line(name, first + i, lines[i], rank_hint=rank_hint, host_hint=host_hint, year=YEARLESS)
            return made[i]

        structural = len(self.kinds)
        stamps = RecentStamps(lines, rank_hint)
        for whole, last in self._wrapped.findings(hits, lines, make, index, stamps.recent, pieces):
            self._finding(whole)  # a message wrapped over lines, read whole (diagnose.parse.wrapped): first of its head line's
            if excerpts:
                self._excerpt(lines, last, make)
        for line_index, pattern_index in hits:
            line = make(line_index)
            order = (index << 32) | line.line
            if pattern_index < structural:
                self._structural(self.kinds[pattern_index], line, line_index, lines, make)
            else:
                if line.timestamp is None:  # only findings are ordered in time; tracebacks print no clock
                    line.timestamp = stamps.recent(line_index, line.rank)
                finding = self.rules.finding(pattern_index - structural, line, order)
                if finding is not None:
                    self._finding(finding)
            if excerpts:
                self._excerpt(lines, line_index, make)

    def _structural(self, kind: str, line: LogLine, i: int, lines: list[str], make: Callable[[int], LogLine]) -> None:
        key = (kind, line.rank, False)
        if kind == "child_failed":
            # a later line of a report already read adds nothing; another agent's report after it (srun: one per node) is read
            if not any(start <= line.line <= end for start, end in self._reports[line.source]):
                records = child_failed_block(make(j) for j in range(i, len(lines)))  # read lazily, to the report's end
                self._reports[line.source].append((line.line, max([line.line, *(int(r.get("last", r["line"])) for r in records)])))
                self.log.failure_records.extend(records)
            return
        if kind in ("launch", "run_start", "nccl_init", "nccl_host"):  # facts, not events
            if kind == "launch":
                record_launch(self.log, line)
            elif kind == "run_start":  # a launcher starting (again): see diagnose.parse.runs
                self._run_starts[line.source].append(line.line)
            elif kind == "nccl_init":
                record_bus(self.log, line)
            elif line.rank is not None and line.host:
                self.log.hosts.setdefault(line.rank, line.host)
            return
        if self._event_keys.get(key, 0) >= MAX_EVENTS_PER_KEY and kind != "traceback":
            self._event_keys[key] += 1
            return
        ignored = self._ignored.get(line.source, (0, 0))
        if kind == "error_line" and ignored[0] < line.line <= ignored[1]:
            return  # the exception line of a traceback Python printed and let go: no process raised it
        if kind == "traceback":
            following = [(j, lines[j]) for j in range(i + 1, min(i + 301, len(lines)))]
            traceback = collect_traceback(line, following, lambda j, _text: make(j))
            if i > 0 and ignored_exception(lines[i - 1]):  # no process died of it, and it takes no rank's place
                self._ignored[line.source] = (line.line, traceback[-1].line)
                return
            event: Event = traceback_event(traceback)
            # a launcher's report (ChildFailedError) keeps places of its own: it never displaces the workers' latest
            key = (kind, line.rank, bool(LAUNCHER_EXCEPTION.search(event.anchor.text)))
        else:
            event = line_event(kind, line)
        self._event_keys[key] = self._event_keys.get(key, 0) + 1
        if kind == "traceback" and self._event_keys[key] > MAX_EVENTS_PER_KEY:  # the first few and the latest: what ended it
            self._drop_latest_traceback(line.rank, key[2])
        self.log.events.append(event)

    def _drop_latest_traceback(self, rank: int | None, launcher: bool) -> None:
        events = self.log.events  # from the end: the latest is near it
        alike = (i for i in range(len(events) - 1, -1, -1) if events[i].kind == "traceback" and events[i].rank == rank)
        latest = next((i for i in alike if bool(LAUNCHER_EXCEPTION.search(events[i].anchor.text)) == launcher), None)
        if latest is not None:
            del events[latest]

    def _finding(self, finding: Finding) -> None:
        group_key = (finding.entry_id, finding.role)
        group = self._groups.get(group_key)
        if group is None:
            group = self._groups[group_key] = FindingGroup(entry_id=finding.entry_id, role=finding.role, first_order=finding.order)
            self._group_ranks[group_key] = set()
        group.count += 1
        if finding.rank is not None:
            self._group_ranks[group_key].add(finding.rank)
        key = (finding.entry_id, finding.signature, finding.rank)
        seen = self._kept.get(key, 0)
        self._kept[key] = seen + 1
        latest = self._latest.setdefault(key, deque())
        if seen < KEEP_PER_KEY or len(latest) < KEEP_LATEST:
            if seen >= KEEP_PER_KEY:
                latest.append(len(self.log.findings))
            self.log.findings.append(finding)
        else:  # keep the first few and the latest few: where a repeated message ended up (a loss scale, a retry)
            slot = latest.popleft()
            self.log.findings[slot] = finding
            latest.append(slot)

    def _excerpt(self, lines: list[str], i: int, make: Callable[[int], LogLine]) -> None:
        for j in range(max(0, i - WINDOW), min(len(lines), i + WINDOW + 1)):
            if len(self._excerpt_keys) < 50_000:
                self._add_excerpt_line(make(j))

    def _drop_kept_lines(self) -> None:
        """The log is too big to keep whole: keep windows around what was found so far."""
        self.log.complete = False
        for finding in self.log.findings:
            self._add_excerpt_line(finding.evidence)
        for event in self.log.events:
            for line in event.lines:
                self._add_excerpt_line(line)
        self.log.lines = {}
        self.log.pieces = {}

    def _add_excerpt_line(self, line: LogLine) -> None:
        key = (line.source, line.line)
        if key not in self._excerpt_keys:
            self._excerpt_keys.add(key)
            self.log.excerpts.append(line)

    def _finish(self) -> ParsedLog:
        sweep_late_values(self.log, self.redactor.sweep_known)
        if self._years:  # year-less stamps into the earliest full date's year: independent of the order files were read in
            rebase_log(self.log, min(self._years))
        log = self.log
        drop_node_hints(log)
        ranks = self._census.ranks | set(log.rank_hints.values())
        log.ranks = sorted(ranks | {f.rank for f in log.findings if f.rank is not None})
        for group_key, group in self._groups.items():
            group.ranks = sorted(self._group_ranks[group_key])
            log.groups.append(group)
        keep_last_run(log, self._run_starts)
        placed: list[Finding | Event] = [*log.findings, *log.events]
        for item in placed:
            if item.rank is not None and item.host and item.rank not in log.hosts:
                log.hosts[item.rank] = item.host
        read_failure_records(log)
        if self._replaced:
            log.notes.append(f"{self._replaced} characters were not valid UTF-8 and were replaced")
        counts = dict(self.redactor.counts)
        log.redactions = Redactions(total=sum(counts.values()), by_type=counts)
        assign_roles(log)
        log.excerpts.sort(key=lambda line: (log.sources.index(line.source) if line.source in log.sources else 0, line.line))
        return log
