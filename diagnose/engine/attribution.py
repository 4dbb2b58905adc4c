"""Which rank a failure belongs to when its own line does not say.

Kernel and scheduler lines name a pid or a host, launcher summaries name ranks with their pids
and exit codes. In order: the rank a gathered traceback names (torch.distributed.checkpoint re-raises every
rank's failure on one rank, each headed ``(RANK n)``) or torch.multiprocessing.spawn's report names (``-- Process 1
terminated with the following error:``, a local rank); the line's own rank prefix; the prefix of the traceback it
ends (a logger prefixes only a record's first line); a logger's local-rank column (OLMo's ``host:3``) made global, or
that of the logger record repeating a bare exception line; a pid the ChildFailedError report (or the
agent's "failed ... local_rank: N (pid: P)" on a single node) ties to a rank; the first troubled
rank on the line's host; the rank the launcher saw exit with an exception (a positive exit code,
where signals mark victims), preferring the report in the same file.
"""

from __future__ import annotations

import re

from diagnose.engine.candidates import chronological
from diagnose.engine.local_ranks import echoed_rank, global_rank, logged_rank
from diagnose.parse.launch_facts import bus_rank, ranks_by_host, ranks_by_pid
from diagnose.parse.parsed_log import ParsedLog
from diagnose.parse.prefixes import NCCL_PREFIX, split_prefix
from diagnose.schema import Finding

# SIGABRT (the NCCL watchdog), SIGTERM (the launcher), SIGINT (a person): usually victims, not causes
VICTIM_EXITS = {-6, -15, -2, 134, 143, 130}
_PID = re.compile(r"(?:\bpid[=: ]\s*|Killed process |PID )(\d+)", re.I)
_UCX_PID = re.compile(r"\[(?:<HOST_\d+>|[\w.-]+):(\d+) *:\d+(?::\d+)?\] ")
"""UCX's own prefix ``[host:pid:thread]`` (its signal handler's ``[host:pid:thread:tid] Caught signal 11``): the pid ties to a rank."""
_SRUN_TASK_EXIT = re.compile(r"srun: error: \S+: task (\d+): Exited with exit code (\d+)")
"""srun's report of one task that ended on its own (its other tasks it then reports ``Terminated`` or ``Killed``)."""
_AGENT_FACTS = ("nproc", "global_ranks", "rank_mapping")
_GATHERED = re.compile(r"Traceback \(most recent call last\): \(RANK (\d+)\)")
"""torch.distributed.checkpoint re-raises every rank's failure on the coordinator, each headed by its rank."""
GATHERED_SPAN = 60
_SPAWNED = re.compile(r"\bProcess (\d+) terminated with (?:the following error|signal|exit code)", re.I)
"""torch.multiprocessing.spawn's report of the process that failed first, by its index: a local rank."""
_DEVICE = re.compile(r"\bGPU (\d+)(?: has a total capac(?:i)?ty|; [\d.]+ [KMGT]iB total capacity)")
"""The CUDA device an out-of-memory message names (2.2+; 2.1 printed "capacty"; older: "GPU 0; 79.15 GiB total capacity")."""


def pid_ranks(log: ParsedLog) -> dict[int, int]:
    """pid -> global rank: from ranked lines that name a pid, and from the launcher's reports."""
    ranks: dict[int, int] = {}
    for finding in log.findings:
        named = _PID.search(finding.evidence.text) if finding.rank is not None else None
        if named and finding.rank is not None:
            ranks.setdefault(int(named.group(1)), finding.rank)
    ranks.update(ranks_by_pid(log))
    ranks.update(launched_ranks(log))  # the launcher's own reports win over a line's prefix
    return ranks


def rank_on_host(log: ParsedLog, host: str | None) -> int | None:
    """The first rank on ``host`` that shows trouble, else its lowest rank."""
    if host is None:
        return None
    ranks = sorted(rank for rank, h in log.hosts.items() if h == host)
    if not ranks:
        return None
    troubled = chronological([f for f in log.findings if f.role != "noise" and f.rank in ranks])
    return troubled[0].rank if troubled else ranks[0]


def exits(log: ParsedLog) -> list[tuple[int, int, str, str]]:
    """(rank, exit code, source, time) of every process the launcher reported, records first; a root cause reported
    without its exit code (a report cut short, a launcher that prints none) counts as an exception's exit, 1."""
    exits = [
        (int(r["rank"]), int(code), r.get("source", ""), r.get("time", ""))
        for r in log.failure_records
        for code in [r.get("exitcode", "1" if r.get("root_cause") == "yes" else "")]
        if r.get("rank", "").isdigit() and code.lstrip("-").isdigit()
    ]
    # the processes a record names with their global rank (a record cut before its ``rank :`` line names none)
    reported = {(r.get("source"), r.get("pid")) for r in log.failure_records if r.get("pid") and r.get("rank", "").isdigit()}
    for event in log.events:
        if event.kind == "agent_failed" and event.fields.get("local_rank") and event.fields.get("exitcode", "").lstrip("-").isdigit():
            if (event.lines[0].source, event.fields.get("pid")) in reported:
                continue  # the failure report names this process with its global rank already
            rank = global_rank(log, event.lines[0].source, int(event.fields["local_rank"]))
            if rank is not None:
                exits.append((rank, int(event.fields["exitcode"]), event.lines[0].source, ""))
    return exits


def _srun_exits(log: ParsedLog) -> list[tuple[int, int, str, str]]:
    """(task, exit code, source, "") of the tasks srun reported exiting on their own, when srun started the ranks itself:
    its task number is then the rank (SLURM_PROCID). With an agent per node in between (torchrun's reports and flags,
    DeepSpeed's rank mapping), a task is a node and names no rank."""
    agent = log.failure_records or any(e.kind == "agent_failed" for e in log.events)
    if agent or any(key in facts for facts in log.launch.values() for key in _AGENT_FACTS):
        return []
    tasks = ((f, _SRUN_TASK_EXIT.search(f.evidence.text)) for f in log.findings)
    return [(int(m.group(1)), int(m.group(2)), f.evidence.source, "") for f, m in tasks if m]


def _raised(log: ParsedLog, source: str, *, same_file_only: bool = False) -> int | None:
    """The rank that exited on its own: an exception or a crash signal, not a teardown signal (the launcher's reports, and
    srun's task when srun started the ranks itself)."""
    raised = [x for x in exits(log) + _srun_exits(log) if x[1] != 0 and x[1] not in VICTIM_EXITS]
    same_file = [x for x in raised if x[2] == source]
    if same_file_only and not same_file:
        return None
    chosen = sorted(same_file or raised, key=lambda x: x[3])
    return chosen[0][0] if chosen else None


def _first_known(*ranks: int | None) -> int | None:
    """The first rank that is known: rank 0 is a rank, not a missing value."""
    return next((rank for rank in ranks if rank is not None), None)


def gathered_rank(log: ParsedLog, finding: Finding) -> int | None:
    """The rank a re-raised traceback names in its header (``Traceback ...: (RANK 3)``), not the rank that printed it."""
    line = finding.evidence
    for step in range(1, GATHERED_SPAN):
        text = log.line_text(line.source, line.line - step)
        if text is None:
            return None
        header = _GATHERED.search(text)
        if header:
            return int(header.group(1))
        if "Traceback (most recent call last)" in text:
            return None
    return None


def spawned_rank(log: ParsedLog, finding: Finding) -> int | None:
    """The rank of the process ``torch.multiprocessing.spawn`` reports: the line's own ``process 1 terminated with
    signal SIGKILL``, or the ``-- Process 1 terminated with the following error:`` heading the traceback the line ends.
    The index is a local rank, made global as the launcher's facts allow."""
    line = finding.evidence
    own = _SPAWNED.search(line.text)
    for step in range(1, GATHERED_SPAN):
        if own:
            break
        text = log.line_text(line.source, line.line - step)
        if text is None:
            return None
        if "Traceback (most recent call last)" in text:
            above = [log.line_text(line.source, line.line - step - back) or "" for back in (1, 2)]
            own = next((m for m in map(_SPAWNED.search, above) if m), None)
            if own is None:
                return None
    return global_rank(log, line.source, int(own.group(1))) if own else None


def traceback_rank(log: ParsedLog, finding: Finding) -> int | None:
    """The rank of the traceback the finding's line belongs to, when only its first line carries a prefix (a logger's
    record: SGLang's ``[... TP1] Scheduler hit an exception: Traceback ...``, Lightning's ``[rank: 1]``)."""
    line = finding.evidence
    for event in log.events:
        if event.kind != "traceback" or event.rank is None or event.lines[0].source != line.source:
            continue
        if event.lines[0].line <= line.line <= event.lines[-1].line and any(kept.line == line.line for kept in event.lines):
            return event.rank
    return None


def launched_ranks(log: ParsedLog) -> dict[int, int]:
    """pid -> global rank, from the launcher's own reports only (its failure records, its 'failed ... local_rank')."""
    ranks = {int(r["pid"]): int(r["rank"]) for r in log.failure_records if r.get("pid", "").isdigit() and r.get("rank", "").isdigit()}
    for event in log.events:
        if event.kind == "agent_failed" and event.fields.get("pid") and event.fields.get("local_rank"):
            rank = global_rank(log, event.lines[0].source, int(event.fields["local_rank"]))
            if rank is not None:
                ranks.setdefault(int(event.fields["pid"]), rank)
    return ranks


def attribute_rank(log: ParsedLog, finding: Finding) -> int | None:
    """The rank a finding belongs to (None when nothing in the log says)."""
    gathered = _first_known(gathered_rank(log, finding), spawned_rank(log, finding))
    if gathered is not None:
        return gathered
    pid = _PID.search(finding.evidence.text)
    reported = launched_ranks(log).get(int(pid.group(1))) if pid else None
    if reported is not None:  # a line about a process the launcher reported: its prefix is the launcher's (srun's task)
        return reported
    on_bus = bus_rank(log, finding.evidence)  # a driver line names the GPU, NCCL's init line its rank: closer than a prefix
    if on_bus is not None:
        return on_bus
    hinted = (
        finding.rank is not None
        and finding.rank == log.rank_hints.get(finding.evidence.source)
        and split_prefix(finding.evidence.text)[0] is None
    )
    if finding.rank is not None and not hinted:
        return finding.rank
    header = traceback_rank(log, finding)
    if header is not None:
        return header
    logged = _first_known(logged_rank(log, finding.evidence), echoed_rank(log, finding))
    if logged is not None:
        return logged
    process = int(pid.group(1)) if pid else _printer_pid(finding)
    by_pid = pid_ranks(log).get(process) if process is not None else None
    if by_pid is not None:
        return by_pid
    on_device = device_rank(log, finding)
    if on_device is not None:
        return on_device
    in_file = _first_known(_raised(log, finding.evidence.source, same_file_only=True), _only_reported(log, finding.evidence.source))
    if in_file is not None or hinted:  # a file name like worker-1 may name a node, not a rank: the launcher's report knows better
        return _first_known(in_file, finding.rank)
    on_host = rank_on_host(log, finding.host)
    if on_host is not None:
        return on_host
    return _first_known(_raised(log, finding.evidence.source), _only_rank(log))


def _printer_pid(finding: Finding) -> int | None:
    """The pid in the printer's own prefix (NCCL's, UCX's), unless the line is a consequence: a rank that reports its peer
    closed the connection is the victim, not the rank that failed."""
    if finding.role == "cascade":
        return None
    nccl = NCCL_PREFIX.search(finding.evidence.text)
    ucx = _UCX_PID.search(finding.evidence.text)
    return int(nccl.group("pid")) if nccl else int(ucx.group(1)) if ucx else None


def _only_rank(log: ParsedLog) -> int | None:
    """Rank 0 when the run says it had one process (world size 1) and no other rank shows: the only rank there was."""
    return 0 if log.stated_world_size() == 1 and set(log.ranks) <= {0} else None


def device_rank(log: ParsedLog, finding: Finding) -> int | None:
    """The rank of a line that names its host and CUDA device, where DeepSpeed mapped that host's local ranks.

    DeepSpeed's launcher makes every local GPU visible to each process it starts with ``--local_rank=N``, and
    the process takes device N: an OOM on ``GPU 5`` of a host is local rank 5 there. A line with no host prefix on a
    launcher that mapped one host (a single node, no pdsh) is on that host.
    """
    device = _DEVICE.search(finding.evidence.text)
    mapping = ranks_by_host(log) if device else {}
    only = next(iter(mapping.values())) if finding.host is None and len(mapping) == 1 else None
    ranks = mapping.get(finding.host or "", only)
    index = int(device.group(1)) if device else -1
    return ranks[index] if ranks and 0 <= index < len(ranks) else None


def _only_reported(log: ParsedLog, source: str) -> int | None:
    """The rank of the launcher's report in ``source`` when it names exactly one."""
    reported = {x[0] for x in exits(log) if x[2] == source}
    return reported.pop() if len(reported) == 1 else None


def launcher_rank(log: ParsedLog) -> int | None:
    """The rank the launcher blames: its ChildFailedError root cause, else the first rank it saw exit on its own."""
    reported = reported_root_rank(log)
    return reported if reported is not None else _raised(log, "")


def reported_root_rank(log: ParsedLog) -> int | None:
    """The rank of torchrun's "Root Cause (first observed failure)" report (the earliest one when each node printed its own)."""
    roots = [
        r
        for r in log.failure_records
        if r.get("root_cause") == "yes"
        and r.get("rank", "").isdigit()
        and int(r.get("exitcode", "1") if r.get("exitcode", "").lstrip("-").isdigit() else 1) not in VICTIM_EXITS
    ]
    if roots:  # one report per node under srun: the earliest failure, not the first node to flush its output
        return int(min(roots, key=lambda r: r.get("time", ""))["rank"])
    return None
