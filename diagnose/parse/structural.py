"""The structural patterns: the lines whose *shape* makes an event (a traceback's head, an NCCL watchdog timeout, a stall
report, torchelastic's failure block, a launcher's facts), each kind with real lines it must find.

``diagnose.parse.events`` turns what they match into events; the reader compiles them into one scanner database with
the signatures.
"""

from __future__ import annotations

from diagnose.parse.launch_facts import LAUNCH_SCAN
from diagnose.parse.prefixes import anchored_on_body

_STRUCTURAL: dict[str, str] = {
    "traceback": r"Traceback \(most recent call last\):",
    "watchdog": r"Watchdog caught collective operation timeout: Work[NH]CCL\(|\bWork WorkNCCL\(SeqNum=\d+.*\) timed out in blocking wait",
    "watchdog_status": r"[Ll]ast enqueued (?:NCCL )?work: \d+, last completed (?:NCCL )?work: \d+",
    "dump_first": r"First PG on this rank to signal dumping",
    "dump_observed": r"Observed flight recorder dump signal from another rank",
    "dump_from_rank": r"Received a dump signal due to a collective timeout from\s+rank \d+",
    "lagging": r"ranks \[[\d, ]+\] are the lagging ranks|\[[\d, ]+\] finished collective #\d+, but didn't join collective #\d+",
    "ready_ranks": r"\[ready ranks: \d+[\d, ]*\]",
    "stall_report": r"^(?:Missing|Stalled) ranks:\s*$",
    "child_failed": (
        # torch 1.9-1.10 (errors/__init__.py _MSG_FORMAT_TEMPLATE) headed its root record "Root Cause:" alone: read when the
        # paste starts below the ChildFailedError line
        r"Root Cause \(first observed failure\):|^Failures:$|^Root Cause:$|ChildFailedError|The first process to do so was:"
        r"|text_generation_launcher: Shard \d+ (?:failed to start|crashed)"
    ),
    "agent_failed": r"failed \(exitcode: -?\d+\) local_rank: \d+",
    "signal": r"Signal \d+ \(SIG\w+\) received by PID|closing signal SIG\w+|Segmentation fault|Fatal Python error",
    "launch": LAUNCH_SCAN,
    "run_start": r"Setting OMP_NUM_THREADS environment variable for each process to be 1 in default|\] WORLD INFO DICT: ",
    "nccl_host": r"(?:<HOST_\d+>|[\w.-]+):\d+:\d+ \[\d+\] NCCL INFO (?:Bootstrap|cudaDriverVersion|NCCL version)",
    "nccl_init": r"NCCL INFO .*\brank \d+ (?:nranks \d+ cudaDev \d+ (?:nvmlDev \d+ )?busId [0-9a-f]+|nRanks \d+ nNodes \d+)",
    "error_line": (
        r"(?:^|[\]>]:?\s?|: )(?:[A-Za-z_][\w.]*\.)?(?:[A-Z]\w*)?(?:Error|Exception|Interrupt)\b(?::|$)"
        r"|\b(?:FATAL|CRITICAL)\b|\berror:|^\s*what\(\):\s"  # the C++ runtime's message of an uncaught exception
    ),
}
STRUCTURAL: dict[str, str] = {kind: anchored_on_body(pattern) for kind, pattern in _STRUCTURAL.items()}
"""The structural patterns by event kind, each anchor allowing launcher prefixes (``^Failures:$`` behind ``[rank0]:``)."""
_EXAMPLES: dict[str, list[str]] = {
    "traceback": ["[rank1]: Traceback (most recent call last):"],
    "watchdog": [
        "[rank0]:[E515 18:36:47.341808597 ProcessGroupNCCL.cpp:632] [Rank 0] Watchdog caught collective operation timeout: "
        "WorkNCCL(SeqNum=241, OpType=ALLREDUCE, NumelIn=6, NumelOut=6, Timeout(ms)=600000) ran for 600086 milliseconds before timing out.",
        "[rank1]:[E324 13:00:25.428029551 compiler_depend.ts:574] [Rank 1] Watchdog caught collective operation timeout: "
        "WorkHCCL(SeqNum=196, OpType=ALLREDUCE, Timeout(ms)=3600000) ran for 3600185 milliseconds before timing out.",
    ],
    "watchdog_status": [
        "[PG ID 0 PG GUID 0(default_pg) Rank 2]  failure detected by watchdog at work sequence id: 493 PG status: "
        "last enqueued work: 493, last completed work: 492"
    ],
    "dump_first": ["[PG ID 0 PG GUID 0(default_pg) Rank 2] First PG on this rank to signal dumping."],
    "dump_from_rank": ["[PG ID 0 PG GUID 0(default_pg) Rank 5] Received a dump signal due to a collective timeout from  rank 2"],
    "lagging": [
        "             [7] finished collective #182, but didn't join collective #183 (count from 1)",
        "         - To our best knowledge, ranks [47] are the lagging ranks that caused this timeout. They never joined any collectives",
    ],
    "ready_ranks": ["Stalled ops: HorovodBroadcast_InceptionV3_Logits_Conv2d_1c_1x1_weights_0 [ready ranks: 5, 6, 3, 1, 4, 0]"],
    "stall_report": ["[0]<stderr>:Missing ranks:", "Stalled ranks:"],
    "child_failed": [
        "Root Cause (first observed failure):",
        "torch.distributed.elastic.multiprocessing.errors.ChildFailedError: ",
        "Root Cause:",
    ],
    "agent_failed": [
        "E0204 16:50:01.123000 75 torch/distributed/elastic/multiprocessing/api.py:869] failed (exitcode: 1) "
        "local_rank: 3 (pid: 1236) of binary: /usr/bin/python3"
    ],
    "signal": [
        "W0204 16:50:00.123000 75 torch/distributed/elastic/multiprocessing/api.py:897] Sending process 1235 closing signal SIGTERM"
    ],
    "nccl_init": [
        "node1:1234:1300 [0] NCCL INFO comm 0x55d0 rank 0 nranks 4 cudaDev 0 busId 1c000 commId 0xabc - Init COMPLETE",
        "node1:1234:1300 [0] NCCL INFO comm 0x55d0 rank 0 nRanks 4 nNodes 1 localRanks 4 localRank 0 MNNVL 0",
    ],
    "error_line": ["[rank3]: torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB."],
}
EXAMPLES: list[list[str]] = [_EXAMPLES.get(kind, []) for kind in STRUCTURAL]
"""Real lines each structural pattern must find, in STRUCTURAL's order: the scanner checks its compiled database with them."""
