"""Structural events: what the log's *shape* says, independent of which failure it is.

A Python traceback is one event; NCCL watchdog and flight-recorder lines carry
fields (SeqNum, OpType, last enqueued/completed work); the torchelastic
ChildFailedError block names ranks, hosts and exit codes. Which failure a line
means is the encyclopedia's business (``diagnose.engine.signatures``), not this module's.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable

from diagnose.parse.prefixes import body_of
from diagnose.schema import Event, LogLine

_PG_ID = re.compile(r"\[PG (?:ID )?(\d+)(?: PG GUID (\d+))?[ \](]")
"""The process group: its GUID names one group on every rank; its ID only counts the groups one process made."""
_GROUP_RANK = re.compile(r"\[Rank (\d+)\]")
"""The rank inside the process group, in the older watchdog line that names no group."""
_WORK = re.compile(r"Work[NH]CCL\(")
"""ProcessGroupNCCL's work (and torch_npu's ProcessGroupHCCL's, on Ascend NPUs, with the same fields)."""
_WORK_FIELDS = re.compile(r"(\w+(?:\(ms\))?)=([^,)]+)")
_STATUS = re.compile(r"[Ll]ast enqueued (?:NCCL )?work: (\d+), last completed (?:NCCL )?work: (\d+)")
_FROM_RANK = re.compile(r"from\s+rank (\d+)")
_LAGGING = re.compile(r"ranks \[([\d, ]+)\] are the lagging ranks|\[([\d, ]+)\] finished collective #\d+, but didn't join collective #\d+")
"""The desync report's lagging ranks: newer wording, and the older one (ranks that never joined the next collective)."""
_READY = re.compile(r"\[ready ranks: ([\d, ]+)\]")
"""Horovod's stall report before 0.16: the ranks that had submitted a stalled tensor (one list per tensor on a line)."""
_EXCEPTION = re.compile(r"^(?P<type>[A-Za-z_][\w.]*(?:Error|Exception|Interrupt|Exit|Failure)?)(?::\s?(?P<msg>.*))?$")
_FRAME = re.compile(r'^\s+File "(?P<file>[^"]+)", line (?P<line>\d+), in (?P<func>\S+)')
_EXITCODE = re.compile(r"exitcode\s*:?\s*(-?\d+)")
_SIGNAL = re.compile(r"(SIG[A-Z]+)")
_LOCAL_RANK_PID = re.compile(r"local_rank: (\d+) \(pid: (\d+)\)")
_BLOCK_FIELD = re.compile(r"^\s*(time|host|rank|exitcode|error_file|traceback)\s*:\s*(.*)$")
_BLOCK_RANK = re.compile(r"^\s*\[(\d+)\]:\s*$")
_BLOCK_RANK_VALUE = re.compile(r"(\d+)(?: \(local_rank: (\d+)\))?")
_MPI_PROCESS = re.compile(r"^\s*Process name:\s*\[\[\d+,\d+\],(\d+)\]")
"""Open MPI's summary names the first process to exit as ``[[jobid,step],rank]``."""
_MPI_EXIT = re.compile(r"^\s*Exit code:\s*(-?\d+)")
_TGI_SHARD = re.compile(r"text_generation_launcher: Shard (\d+) (?:failed to start|crashed)")
"""Text Generation Inference's launcher naming the shard (its torch.distributed rank) that failed: then it stops the others."""

_HEADER_INDENT = re.compile(r"^(\s*)(?:\w+\s*:\s*)?Traceback \(most recent call last\)")
"""A traceback header's own indentation (torchrun's ``  traceback : Traceback ...`` field keeps the field's)."""

TRACEBACK_SPAN = 300
BLOCK_SPAN = 60
MESSAGE_CHARS = 500

LAUNCHER_EXCEPTION = re.compile(
    r"\b(?:ChildFailedError|SignalException|ProcessRaisedException|ProcessExitedException|TuneError|TrainingFailedError)\b"
)
"""Exceptions a launcher raises to report its workers (torchrun's agent, ``mp.spawn``; Ray Tune's "Trials did not complete",
Ray Train's ``TrainingFailedError``), not a worker's own failure."""


def line_event(kind: str, line: LogLine) -> Event:
    """An event of one line, with the fields its kind carries."""
    body = body_of(line.text)
    fields: dict[str, str] = {}
    if kind == "watchdog":
        work = _WORK.search(body)
        inner = body[work.end() :].split(" ran for ", 1)[0] if work else ""
        fields = {k: v.strip() for k, v in _WORK_FIELDS.findall(inner)}
        ran = re.search(r"ran for (\d+) milliseconds", body)
        if ran:
            fields["ran_ms"] = ran.group(1)
        group = _PG_ID.search(body)
        in_group = _GROUP_RANK.search(body)
        if group:  # SeqNums count per process group: only one group's are comparable
            fields["pg"] = group.group(2) or group.group(1)
        elif in_group and line.rank is not None and int(in_group.group(1)) != line.rank:
            fields["pg"] = f"a subgroup at {line.source}:{line.line}"  # which one is unsaid: comparable to no other line
    elif kind == "watchdog_status":
        status = _STATUS.search(body)
        if status:
            fields = {"last_enqueued": status.group(1), "last_completed": status.group(2)}
            group = _PG_ID.search(body)
            if group:
                fields["pg"] = group.group(2) or group.group(1)
    elif kind == "dump_from_rank":
        fields = {"from_rank": _FROM_RANK.search(body).group(1)}  # type: ignore[union-attr]
    elif kind == "lagging":
        lagging = _LAGGING.search(body)
        fields = {"ranks": (lagging.group(1) or lagging.group(2)).replace(" ", "")} if lagging else {}
    elif kind == "ready_ranks":
        ready = {rank for listed in _READY.findall(body) for rank in listed.replace(" ", "").split(",") if rank}
        fields = {"ranks": ",".join(sorted(ready, key=int))}
    elif kind in ("agent_failed", "signal"):
        exitcode = _EXITCODE.search(body)
        signal = _SIGNAL.search(body)
        local = _LOCAL_RANK_PID.search(body)
        fields = {
            k: v
            for k, v in (
                ("exitcode", exitcode and exitcode.group(1)),
                ("signal", signal and signal.group(1)),
                ("local_rank", local and local.group(1)),
                ("pid", local and local.group(2)),
            )
            if v
        }
    return Event(
        kind=kind,
        role="noise",
        lines=[line],
        rank=line.rank,
        host=line.host,
        timestamp=line.timestamp,
        message=body.strip()[:MESSAGE_CHARS],
        fields=fields,
    )


def traceback_event(lines: list[LogLine]) -> Event:
    """One event for a Python traceback: its lines from 'Traceback' to the exception line."""
    last = lines[-1]
    exception = _EXCEPTION.match(body_of(last.text).strip())
    frames = [m.groupdict() for m in (_FRAME.match(body_of(line.text)) for line in lines) if m]
    fields = {"frames": " <- ".join(f"{f['func']} ({f['file'].rsplit('/', 1)[-1]}:{f['line']})" for f in frames[::-1][:3])}
    return Event(
        kind="traceback",
        role="noise",
        lines=lines,
        rank=last.rank if last.rank is not None else lines[0].rank,
        host=last.host or lines[0].host,
        timestamp=lines[0].timestamp or last.timestamp,
        exception_type=exception.group("type") if exception else None,
        message=(exception.group("msg") or "").strip()[:MESSAGE_CHARS] if exception else body_of(last.text).strip()[:MESSAGE_CHARS],
        fields=fields,
    )


IGNORED = "Exception ignored in"
"""CPython's heading of an exception it reported and let go (``Exception ignored in atexit callback: ...``,
``Exception ignored in: <function ... __del__>``, ``Exception ignored in thread started by``)."""


def ignored_exception(heading: str) -> bool:
    """True when ``heading``, the line above a traceback, says Python printed the exception and went on."""
    return body_of(heading).lstrip().startswith(IGNORED)


def collect_traceback(first: LogLine, following: list[tuple[int, str]], make: Callable[[int, str], LogLine]) -> list[LogLine]:
    """The lines of a traceback that starts at ``first``; ``following`` are (line_no, text) after it.

    Lines printed by other ranks (interleaved output) are skipped; the traceback ends at the
    first line of the same rank indented no deeper than its header (unindented, unless the header is itself
    indented: torchrun's ``  traceback : Traceback ...`` field ends at ``  KeyError: ...``) that is not a
    chained-exception marker.
    """
    lines = [first]
    indented = _HEADER_INDENT.match(body_of(first.text))
    margin = len(indented.group(1)) if indented else 0  # a progress bar the header is glued to is no indentation
    for line_no, text in following[:TRACEBACK_SPAN]:
        line = make(line_no, text)
        if first.rank is not None and line.rank is not None and line.rank != first.rank:
            continue
        body = body_of(text)
        if not body.strip():
            continue
        lines.append(line)
        own = body[margin:] if body[:margin].isspace() or not margin else body
        if not own[:1].isspace() and not own.startswith(("Traceback", "During handling", "The above exception")):
            break
    return lines


def child_failed_block(lines: Iterable[LogLine]) -> list[dict[str, str]]:
    """The per-rank records of a ChildFailedError block (or Open MPI's first failed process, or the shard Text Generation
    Inference's launcher names): rank, local_rank, host, exitcode, time, root_cause, ``last``: the record's last
    line (its last field, or the last indented line of the traceback it copied from its process's error file) and
    ``copied_from``: the line that traceback starts on.

    The report is read to its closing rule (``=====`` after the root cause), however many records and copied
    tracebacks it holds, and given up after ``BLOCK_SPAN`` lines that add nothing to it (no record, field or
    copied traceback line).
    """
    records: list[dict[str, str]] = []
    current: dict[str, str] | None = None
    in_root = old_format = False
    idle = 0
    copying = False  # inside the traceback a record copied from its process's error file
    for line in lines:
        idle += 1
        if idle > BLOCK_SPAN:
            break
        body = body_of(line.text)
        # a blank line neither ends a copied traceback nor extends it (a hard wrap's continued pieces read blank)
        copying = copying and current is not None and (body[:1].isspace() or not body)
        if copying and current is not None and body.strip():
            current["last"] = str(line.line)
            idle = 0
        if "Root Cause (first observed failure)" in body or "The first process to do so was:" in body:
            in_root = True
            continue
        if body.strip() in ("Root Cause:", "Other Failures:"):  # torch 1.9-1.10: the root first, the others after it
            in_root = old_format = body.strip() == "Root Cause:"
            continue
        shard = _TGI_SHARD.search(body)
        if shard:  # its own one-line report: the first shard it saw fail
            records.append(
                {"index": shard.group(1), "rank": shard.group(1), "root_cause": "yes", "line": str(line.line), "source": line.source}
            )
            break
        mpi = _MPI_PROCESS.match(body)
        if mpi:
            current = {
                "index": mpi.group(1),
                "rank": mpi.group(1),
                "root_cause": "yes" if in_root else "no",
                "line": str(line.line),
                "source": line.source,
            }
            records.append(current)
            continue
        exit_code = _MPI_EXIT.match(body)
        if exit_code and current is not None and "exitcode" not in current:
            current["exitcode"] = exit_code.group(1)
            break
        header = _BLOCK_RANK.match(body)
        if header:
            at = str(line.line)
            current = {"index": header.group(1), "root_cause": "yes" if in_root else "no", "line": at, "last": at, "source": line.source}
            records.append(current)
            idle = 0
            continue
        field = _BLOCK_FIELD.match(body)
        if field and current is not None:
            idle = 0
            key, value = field.group(1), field.group(2).strip()
            current["last"] = str(line.line)
            copying = key == "traceback" and value.startswith("Traceback")
            if copying:
                current["copied_from"] = str(line.line)
            if key == "rank":
                rank = _BLOCK_RANK_VALUE.match(value)
                if rank:
                    current["rank"] = rank.group(1)
                    if rank.group(2):
                        current["local_rank"] = rank.group(2)
            elif key == "exitcode":
                code = re.match(r"(-?\d+)(?: \(pid: (\d+)\))?", value)
                if code:
                    current["exitcode"] = code.group(1)
                    if code.group(2):
                        current["pid"] = code.group(2)
            else:
                current[key] = value
        if body.startswith("*" if old_format else "=" * 20) and records and len(records[-1]) > 3 and (in_root or old_format):
            break
    return records
