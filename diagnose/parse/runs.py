"""A file that holds several runs (``nohup ... >> train.out`` appended again and again): only the last one is diagnosed.

A launcher prints a banner when it starts (torchrun's and ``torch.distributed.launch``'s "Setting OMP_NUM_THREADS
environment variable for each process to be 1 in default", DeepSpeed launch.py's "WORLD INFO DICT:"). When a file's
failures lie on both sides of such a banner, the run before it had already ended when the next one started: its
failure is not what the file ends on, and the launcher's report of it (a ChildFailedError naming another rank) must
not decide the last run's rank. Banners with no failure between them (every node's agent starting at once) are one
start; a banner with no failure after it (the next run had not failed yet) cuts nothing.
"""

from __future__ import annotations

from collections import defaultdict

from diagnose.parse.parsed_log import FindingGroup, ParsedLog

FAILURE_KINDS = frozenset({"traceback", "agent_failed", "signal", "error_line"})
"""Events that show a run failing (its findings show it too)."""


def _failure_lines(log: ParsedLog) -> dict[str, list[int]]:
    """source -> the lines of its failures: non-noise findings, failure events, the launcher's reports."""
    lines: dict[str, list[int]] = defaultdict(list)
    for finding in log.findings:
        if finding.role != "noise":
            lines[finding.evidence.source].append(finding.evidence.line)
    for event in log.events:
        if event.kind in FAILURE_KINDS:
            lines[event.anchor.source].append(event.anchor.line)
    for record in log.failure_records:
        if record.get("source") and str(record.get("line", "")).isdigit():
            lines[record["source"]].append(int(record["line"]))
    return lines


def last_run_starts(log: ParsedLog, starts: dict[str, list[int]]) -> dict[str, int]:
    """source -> the line where its last run starts, for each source whose failures lie on both sides of a run start."""
    failures = _failure_lines(log)
    cuts: dict[str, int] = {}
    for source, banners in starts.items():
        failed = sorted(failures.get(source, []))
        for banner in sorted(banners, reverse=True):
            if any(line < banner for line in failed) and any(line > banner for line in failed):
                cuts[source] = banner
                break
    return cuts


def keep_last_run(log: ParsedLog, starts: dict[str, list[int]]) -> None:
    """Drop what earlier runs in the same file printed (findings, events, launcher reports) and say so in a note."""
    cuts = last_run_starts(log, starts)
    if not cuts:
        return

    def later(source: str, line: int) -> bool:
        return line >= cuts.get(source, 0)

    log.findings = [f for f in log.findings if later(f.evidence.source, f.evidence.line)]
    log.events = [e for e in log.events if later(e.anchor.source, e.anchor.line)]
    log.failure_records = [
        r for r in log.failure_records if not str(r.get("line", "")).isdigit() or later(r.get("source", ""), int(r["line"]))
    ]
    groups: dict[tuple[str, str], FindingGroup] = {}
    for finding in log.findings:
        key = (finding.entry_id, finding.role)
        group = groups.setdefault(key, FindingGroup(entry_id=finding.entry_id, role=finding.role, first_order=finding.order))
        group.count += 1
        if finding.rank is not None and finding.rank not in group.ranks:
            group.ranks = sorted([*group.ranks, finding.rank])
    log.groups = list(groups.values())
    for source, line in sorted(cuts.items()):
        earlier = sum(1 for banner in starts[source] if banner < line)
        log.notes.append(
            f"{source} holds more than one run (a launcher starts again at line {line}, after {earlier} earlier start(s)): "
            "only the last run is diagnosed"
        )
