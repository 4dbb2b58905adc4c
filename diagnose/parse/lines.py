"""One masked line -> LogLine: who printed it (rank, local rank, host) and when.

The launcher prefix says it first (``diagnose.parse.prefixes``); else the body may name the rank
(``[Rank 3]``, ProcessGroupNCCL's ``[PG 0 Rank 3]``, ``[PG 0 (default_pg) Rank 3]`` and ``[PG ID 0 PG GUID 0(default_pg)
Rank 3]``, accelerate's and others' ``[RANK 3]``, ``rank=3``, torch_npu's ``(PID:7, Device:3, RankID:3)``; its
``RankID:-1`` is no rank), NCCL's ``host:pid:tid [dev]`` prefix the host, a syslog line its host.
"""

from __future__ import annotations

import re

from diagnose.parse.prefixes import NCCL_PREFIX, split_prefix_local
from diagnose.parse.timestamps import parse_timestamp
from diagnose.schema import LogLine

_OTHER = r"(?<!around )(?<!from )(?<!for )(?<!to )(?<!peer )(?<!with )(?<!and )"
"""Words before an untagged "rank N" that make it another rank than the printer ("at and around rank 39", "from rank 0")."""
_IN_BODY_RANK = re.compile(
    rf"\[(?:PG (?:ID \d+ PG GUID \S+|\d+(?: \([^)]*\))?) )?R(?:ank|ANK) (\d+)\]|{_OTHER}\brank(?:=| )(\d+)\b|\[rank(\d+)\]"
    r"|^srun: error: \S+: tasks? (\d+):|\(PID:\d+, Device:\d+, RankID:(\d+)\)"
)
_BARE_RANK = re.compile(r"\brank(?:=| )(\d+)\b")
"""The untagged form: a message naming two ranks ("rank 10 and rank 8 both on CUDA device") names no printer."""
_SYSLOG_HOST = re.compile(r"^[A-Z][a-z]{2} +\d+ \d\d:\d\d:\d\d (?P<host><HOST_\d+>|[\w.-]+) (?:kernel|slurmd|slurmstepd)")


def rank_named(body: str) -> int | None:
    """The rank a line's body names as its printer (``[Rank 3]``, ``rank=3``...; see above), or None."""
    in_body = _IN_BODY_RANK.search(body)
    if in_body and not (in_body.group(2) is not None and len(set(_BARE_RANK.findall(body))) > 1):
        return int(next(g for g in in_body.groups() if g is not None))
    return None


def make_line(
    source: str, line_no: int, text: str, *, rank_hint: int | None = None, host_hint: str | None = None, year: int | None = None
) -> LogLine:
    """Build a LogLine from one masked line; hints come from the file name (rank_3.log, node01/...)."""
    rank, local_rank, host, body = split_prefix_local(text)
    if rank is None:
        rank = rank_named(body)
    nccl = NCCL_PREFIX.match(body)
    if nccl and body.startswith("NCCL", nccl.end()):
        host = host or nccl.group("host")  # its [device] is a CUDA device, not a local rank
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
