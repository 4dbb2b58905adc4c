"""A file name that numbers a node, not a rank: Kubeflow's ``job-worker-0`` pod runs torchrun with
``--nproc_per_node=4``; its agent's own lines (rendezvous, store errors) belong to no global rank."""

from __future__ import annotations

from diagnose.parse.parsed_log import ParsedLog
from diagnose.parse.prefixes import split_prefix
from diagnose.schema import LogLine


def _runs_several_ranks(log: ParsedLog, source: str) -> bool:
    nproc = log.launch.get(source, {}).get("nproc", "")
    return nproc.isdigit() and int(nproc) > 1


def _unhint(line: LogLine, source: str, hint: int) -> None:
    if line.source == source and line.rank == hint and split_prefix(line.text)[0] is None:
        line.rank = None


def drop_node_hints(log: ParsedLog) -> None:
    """Forget the rank a file name gave wherever that file's launch line runs several processes per node."""
    for source, hint in list(log.rank_hints.items()):
        if not _runs_several_ranks(log, source):
            continue
        del log.rank_hints[source]
        for finding in log.findings:
            if finding.evidence.source == source and finding.rank == hint and split_prefix(finding.evidence.text)[0] is None:
                finding.rank = None
            _unhint(finding.evidence, source, hint)
        for event in log.events:
            if event.rank == hint and all(line.source == source for line in event.lines):
                event.rank = None if all(split_prefix(line.text)[0] is None for line in event.lines) else event.rank
            for line in event.lines:
                _unhint(line, source, hint)
        for line in log.excerpts:
            _unhint(line, source, hint)
