"""How a launcher mapped processes to global ranks, as its own lines say: torchrun's flags and agent report,
DeepSpeed's ``global_rank_mapping`` (host -> its global ranks, in local-rank order), Ray Train's list of the worker
processes it started (pid -> world rank), and NCCL's init lines (``host:pid:tid [3] NCCL INFO ... rank 11 nranks 16
cudaDev 3 nvmlDev 3 busId 5d000``: which rank drives the GPU at a PCI bus, and which process that rank is)."""

from __future__ import annotations

import re

from diagnose.parse.parsed_log import ParsedLog
from diagnose.parse.prefixes import NCCL_PREFIX
from diagnose.schema import LogLine

LAUNCH_FACTS = [
    ("node_rank", re.compile(r"\bnode[_-]rank[= ](\d+)")),
    ("nproc", re.compile(r"\bnproc[_-]per[_-]node[= ](\d+)")),
    ("global_ranks", re.compile(r"\bglobal_ranks=\[([\d, ]+)\]")),
    ("nnodes", re.compile(r"\bnnodes[= ](\d+)")),
    ("world_size", re.compile(r"\b(?:WORLD_SIZE|world_size|using world size)\s?[=:] ?(\d+)")),
    # the training program's own word: facebookresearch/ijepa (and its jepa forks) "Initialized (rank/world-size) 0/1",
    # Lightning "Initializing distributed: GLOBAL_RANK: 0, MEMBER: 1/8" (Megatron's "using world size: 1" is above)
    ("world_size", re.compile(r"\(rank/world-size\) \d+/(\d+)|\bGLOBAL_RANK: \d+, MEMBER: \d+/(\d+)")),
    # deepspeed/launcher/launch.py: logger.info(f"global_rank_mapping={global_rank_mapping}")
    ("rank_mapping", re.compile(r"\bglobal_rank_mapping=defaultdict\(<class 'list'>, (\{[^}]*\})\)")),
]
_MAPPED_HOST = re.compile(r"'([^']+)': \[([\d, ]*)\]")
_RAY_WORKER = re.compile(r"\bpid=(\d+)\) world_rank=(\d+)|\bpid=(\d+)(?:, ip=[^)\s]*)?\) Setting up process group for: \S+ \[rank=(\d+)")
"""ray/train/_internal/backend_executor.py (and Ray Train v2's controller) list the workers they started:
``(TorchTrainer pid=71127) - (ip=10.216.70.82, pid=75298) world_rank=0, local_rank=0, node_rank=0``; each worker
says its own rank as it joins (ray/train/torch/config.py ``_setup_torch_process_group``):
``(RayTrainWorker pid=1193, ip=10.244.4.193) Setting up process group for: env:// [rank=0, world_size=2]``."""
_DEEPSPEED_KILL = re.compile(r"\[launch\.py:\d+:sigkill_handler\] Killing subprocess (\d+)")
"""deepspeed/launcher/launch.py ``sigkill_handler``: ``for process in processes: logger.info(f"Killing subprocess
{process.pid}")``, over the processes it started in local-rank order: a node's n-th pid is its local rank n."""
_DEEPSPEED_SPAWN = re.compile(r"\[launch\.py:\d+:main\] process (\d+) spawned with command: .*'--local_rank=(\d+)'")
"""deepspeed/launcher/launch.py ``main``: ``logger.info(f"process {process.pid} spawned with command: {cmd}")``, the
command ending in ``--local_rank={local_proc}`` (unless ``--no_local_rank``): each process's pid and local rank."""
LAUNCH_SCAN = "|".join(
    [*(pattern.pattern for _, pattern in LAUNCH_FACTS), _RAY_WORKER.pattern, _DEEPSPEED_KILL.pattern, _DEEPSPEED_SPAWN.pattern]
)
"""What the reader scans for to hand a line to ``record_launch``: any fact's pattern, a Ray worker, DeepSpeed's
process list (as it spawns them, as it kills them)."""


def record_launch(log: ParsedLog, line: LogLine) -> None:
    """Remember how local ranks map to global ones in this line's source (the first value of each fact)."""
    facts = log.launch.setdefault(line.source, {})
    for key, pattern in LAUNCH_FACTS:
        match = pattern.search(line.text)
        if match and key not in facts:
            value = next(group for group in match.groups() if group is not None)
            facts[key] = value if key == "rank_mapping" else value.replace(" ", "")
    worker = _RAY_WORKER.search(line.text)
    if worker:
        pid, rank = (group for group in worker.groups() if group is not None)
        facts.setdefault(f"pid:{pid}", rank)
    killed = _DEEPSPEED_KILL.search(line.text)
    if killed:
        key = f"killed:{line.host or ''}"
        listed = facts.get(key, "").split(",") if facts.get(key) else []
        if killed.group(1) not in listed:
            facts[key] = ",".join([*listed, killed.group(1)])
    spawned = _DEEPSPEED_SPAWN.search(line.text)
    if spawned:
        facts.setdefault(f"spawned:{line.host or ''}:{spawned.group(1)}", spawned.group(2))


def ranks_by_pid(log: ParsedLog) -> dict[int, int]:
    """pid -> global rank, from the launcher's list of the processes it started (Ray Train's worker list, DeepSpeed's
    spawn and kill lists), else from NCCL's init lines."""
    return (
        nccl_ranks_by_pid(log)
        | killed_ranks_by_pid(log)
        | {int(key[4:]): int(rank) for facts in log.launch.values() for key, rank in facts.items() if key.startswith("pid:")}
    )


def killed_ranks_by_pid(log: ParsedLog) -> dict[int, int]:
    """pid -> global rank from DeepSpeed's process lists: the pid it says it spawned with ``--local_rank=n``, and the
    n-th pid of a node's kill list; local rank n is global through the launcher's rank mapping for that host, or as
    it is on a launcher with no host prefix (one node, no pdsh)."""
    mapping = ranks_by_host(log)

    def global_of(host: str, local: int) -> int | None:
        return local if not host else (mapping[host][local] if local < len(mapping.get(host, [])) else None)

    ranks: dict[int, int] = {}
    for facts in log.launch.values():
        for key, value in facts.items():
            if key.startswith("spawned:"):
                host, pid = key[8:].rsplit(":", 1)
                if (rank := global_of(host, int(value))) is not None:
                    ranks.setdefault(int(pid), rank)
            elif key.startswith("killed:"):
                for local, pid in enumerate(value.split(",")):
                    if (rank := global_of(key[7:], local)) is not None:
                        ranks.setdefault(int(pid), rank)
    return ranks


def nccl_ranks_by_pid(log: ParsedLog) -> dict[int, int]:
    """pid -> global rank, from each process's NCCL init line for the log's largest communicator (a tensor- or
    pipeline-parallel group numbers its ranks from 0). A pid seen with two ranks or on two hosts (containers reuse small
    pids) names none."""
    seen: dict[int, set[tuple[int, int, str]]] = {}
    for facts in log.launch.values():
        for key in facts:
            if key.startswith("nccl:"):
                printer, nranks, rank, host = key[5:].split(":", 3)
                seen.setdefault(int(printer), set()).add((int(nranks), int(rank), host))
    widest = max((nranks for comms in seen.values() for nranks, _, _ in comms), default=0)
    ranks: dict[int, int] = {}
    for pid, comms in seen.items():
        named = {(rank, host) for nranks, rank, host in comms if nranks == widest}
        if len(named) == 1 and len({host for _, _, host in comms}) == 1:
            ranks[pid] = named.pop()[0]
    return ranks


def ranks_by_host(log: ParsedLog) -> dict[str, list[int]]:
    """host -> its global ranks in local-rank order, from any source's DeepSpeed rank mapping."""
    mapping: dict[str, list[int]] = {}
    for facts in log.launch.values():
        for host, ranks in _MAPPED_HOST.findall(facts.get("rank_mapping", "")):
            mapping.setdefault(host, [int(r) for r in ranks.replace(" ", "").split(",") if r])
    return mapping


_NCCL_INIT = re.compile(r"\brank (\d+) nranks (\d+) cudaDev \d+ (?:nvmlDev \d+ )?busId ([0-9a-f]+)")
_NCCL_TOPOLOGY = re.compile(r"\bcomm 0x[0-9a-f]+ rank (\d+) nRanks (\d+) nNodes \d+")
"""NCCL 2.19+'s init.cc ``comm %p rank %d nRanks %d nNodes %d localRanks %d localRank %d MNNVL %d``: a process's rank
in a communicator, without the GPU's bus (an excerpt may keep it and not the ``Init COMPLETE`` line)."""
_PCI = re.compile(r"(?i)\bPCI:([0-9a-f]{4,8}):([0-9a-f]{2}):([0-9a-f]{2})\b|\bGPU ?([0-9a-f]{4,8}):([0-9a-f]{2}):([0-9a-f]{2})\.([0-7])")
"""A GPU's PCI address as the driver (``NVRM: Xid (PCI:0000:5d:00)``) or nvidia-smi (``GPU0000:5D:00.0``) prints it."""


def _bus_key(stream: int | None, bus: int) -> str:
    return f"bus:{stream}:{bus:x}"


def record_bus(log: ParsedLog, line: LogLine) -> None:
    """From an NCCL init line: which global rank drives the GPU at a PCI bus, within this line's stream (source and
    launcher prefix), and which rank the printing process holds in that communicator (``nccl_ranks_by_pid``)."""
    match = _NCCL_INIT.search(line.text) or _NCCL_TOPOLOGY.search(line.text)
    if match:
        facts = log.launch.setdefault(line.source, {})
        if match.re is _NCCL_INIT:
            facts.setdefault(_bus_key(line.rank, int(match.group(3), 16)), match.group(1))
        printer = NCCL_PREFIX.search(line.text)  # the process that printed the init line
        if printer:  # one key per (pid, communicator size, rank, host) seen: nccl_ranks_by_pid decides
            facts.setdefault(f"nccl:{printer.group('pid')}:{match.group(2)}:{match.group(1)}:{printer.group('host')}", "")


def pci_bus(text: str) -> int | None:
    """The PCI address a line names, as NCCL's busId number (domain, bus, device and function digits read as hex)."""
    match = _PCI.search(text)
    if match is None:
        return None
    groups = match.groups()
    domain, bus, device, function = (*groups[:3], "0") if groups[0] else groups[3:]
    return int(f"{domain}{bus}{device}{function}", 16)


def bus_rank(log: ParsedLog, line: LogLine) -> int | None:
    """The global rank whose NCCL init line reported the GPU this line names, in the same stream."""
    bus = pci_bus(line.text)
    rank = log.launch.get(line.source, {}).get(_bus_key(line.rank, bus)) if bus is not None else None
    return int(rank) if rank is not None else None
