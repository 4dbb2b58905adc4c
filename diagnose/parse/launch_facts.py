"""How a launcher mapped processes to global ranks, as its own lines say: torchrun's flags and agent report,
DeepSpeed's ``global_rank_mapping`` (host -> its global ranks, in local-rank order)."""

from __future__ import annotations

import re

from diagnose.parse.parsed_log import ParsedLog
from diagnose.schema import LogLine

LAUNCH_FACTS = [
    ("node_rank", re.compile(r"\bnode[_-]rank[= ](\d+)")),
    ("nproc", re.compile(r"\bnproc[_-]per[_-]node[= ](\d+)")),
    ("global_ranks", re.compile(r"\bglobal_ranks=\[([\d, ]+)\]")),
    ("nnodes", re.compile(r"\bnnodes[= ](\d+)")),
    ("world_size", re.compile(r"\b(?:WORLD_SIZE|world_size)[=:] ?(\d+)")),
    # deepspeed/launcher/launch.py: logger.info(f"global_rank_mapping={global_rank_mapping}")
    ("rank_mapping", re.compile(r"\bglobal_rank_mapping=defaultdict\(<class 'list'>, (\{[^}]*\})\)")),
]
_MAPPED_HOST = re.compile(r"'([^']+)': \[([\d, ]*)\]")


def record_launch(log: ParsedLog, line: LogLine) -> None:
    """Remember how local ranks map to global ones in this line's source (the first value of each fact)."""
    facts = log.launch.setdefault(line.source, {})
    for key, pattern in LAUNCH_FACTS:
        match = pattern.search(line.text)
        if match and key not in facts:
            facts[key] = match.group(1) if key == "rank_mapping" else match.group(1).replace(" ", "")


def ranks_by_host(log: ParsedLog) -> dict[str, list[int]]:
    """host -> its global ranks in local-rank order, from any source's DeepSpeed rank mapping."""
    mapping: dict[str, list[int]] = {}
    for facts in log.launch.values():
        for host, ranks in _MAPPED_HOST.findall(facts.get("rank_mapping", "")):
            mapping.setdefault(host, [int(r) for r in ranks.replace(" ", "").split(",") if r])
    return mapping
