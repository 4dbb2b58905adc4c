"""One masked line -> LogLine: who printed it (rank, local rank, host) and when.

Launcher prefixes stack (``<HOST_1>: [rank3]:[E1202 ...]``); each known one is peeled in turn.
Anchored on masked hosts (``<HOST_n>``), since the redactor ran first.
"""

from __future__ import annotations

import re

from diagnose.parse.timestamps import parse_timestamp
from diagnose.schema import LogLine

_PREFIXES: list[tuple[str, re.Pattern[str]]] = [
    ("timestamp", re.compile(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(?:\.\d+)?(?:Z|[+-]\d\d:?\d\d)?:?\s")),
    ("mpi", re.compile(r"\[(?P<job>\d+),(?P<rank>\d+)\]<(?:stdout|stderr)>:\s?")),
    ("torchrun", re.compile(r"\[(?:rank|default|worker|trainer)(?P<rank>\d+)\]:\s?")),
    ("lightning", re.compile(r"\[rank: (?P<rank>\d+)\]\s?")),
    ("kubectl", re.compile(r"\[pod/(?P<host>[^/\]\s]+)/[^\]\s]*\]\s")),
    ("host", re.compile(r"(?P<host><(?:HOST|POD|IP)_\d+>|worker-\d+|node-?\d+):\s")),
    ("srun", re.compile(r"\s{0,4}(?P<rank>\d{1,5}): ")),
]
_K8S_INDEX = re.compile(r"-(?:master|worker|launcher)-(\d+)\b")
_IN_BODY_RANK = re.compile(
    r"\[(?:PG ID \d+ PG GUID \S+ )?Rank (\d+)\]|\brank(?:=| )(\d+)\b|\[rank(\d+)\]|^srun: error: \S+: tasks? (\d+):"
)
_SYSLOG_HOST = re.compile(r"^[A-Z][a-z]{2} +\d+ \d\d:\d\d:\d\d (?P<host><HOST_\d+>|[\w.-]+) (?:kernel|slurmd|slurmstepd)")
_NCCL_HOST = re.compile(r"^(?P<host><HOST_\d+>|[\w.-]+):\d+:\d+ \[(?P<dev>\d+)\] NCCL")


def split_prefix(text: str) -> tuple[int | None, str | None, str]:
    """Peel launcher prefixes: (rank, host, body)."""
    rank: int | None = None
    host: str | None = None
    body = text
    for _ in range(4):
        for name, pattern in _PREFIXES:
            match = pattern.match(body)
            if not match:
                continue
            groups = match.groupdict()
            if groups.get("rank") is not None:
                rank = int(groups["rank"])  # the innermost prefix names the global rank (srun's "1:" is a task)
            if groups.get("host") and host is None:
                host = groups["host"]
                k8s = _K8S_INDEX.search(host) if name == "kubectl" else None
                if k8s and rank is None:
                    rank = int(k8s.group(1))
            body = body[match.end():]
            break
        else:
            break
    return rank, host, body


def make_line(source: str, line_no: int, text: str, *, rank_hint: int | None = None,
              host_hint: str | None = None, year: int | None = None) -> LogLine:
    """Build a LogLine from one masked line; hints come from the file name (rank_3.log, node01/...)."""
    rank, host, body = split_prefix(text)
    local_rank: int | None = None
    if rank is None:
        in_body = _IN_BODY_RANK.search(body)
        if in_body:
            rank = int(next(g for g in in_body.groups() if g is not None))
    nccl = _NCCL_HOST.match(body)
    if nccl:
        host = host or nccl.group("host")
        local_rank = int(nccl.group("dev"))
    syslog = _SYSLOG_HOST.match(body) if host is None else None
    if syslog:
        host = syslog.group("host")
    return LogLine(
        source=source,
        line=line_no,
        rank=rank if rank is not None else rank_hint,
        local_rank=local_rank,
        host=host or host_hint,
        timestamp=parse_timestamp(body, year=year) or parse_timestamp(text, year=year),
        text=text,
    )


def body_of(text: str) -> str:
    """The line without its launcher prefixes."""
    return split_prefix(text)[2]
