"""Launcher line prefixes: the one table of how launchers mark the rank and host that printed a line (and the quote
marker of a log pasted into Markdown or an e-mail, which marks nothing).

Prefixes stack (``<HOST_1>: [rank3]:[E1202 ...]``); ``split_prefix`` peels each known one in turn.
Anchored on masked hosts (``<HOST_n>``), since the redactor ran first. Every other module that needs
a rank prefix (the reader's fast rank census, interleaved output, retrieval's normalisation) derives
its pattern from ``RANK_WORDS`` here.
"""

from __future__ import annotations

import re
from functools import cache

RANK_WORDS: tuple[str, ...] = ("rank", "default", "worker", "trainer")
"""torchrun's ``[rankN]:`` (``--tee``) and ``[<role>N]:`` (``--role``, default ``default``)."""

_WORDS = "|".join(RANK_WORDS)
RANK_PREFIX = re.compile(rf"\[(?:{_WORDS})(\d+)\]:")
"""A torchrun rank prefix anywhere in a line."""

QUOTE = re.compile(r">(?: |(?=>|$))")
"""A Markdown or e-mail quote marker before a pasted line (``> ``, ``>>``): no part of what was printed."""

PREFIXES: list[tuple[str, re.Pattern[str]]] = [
    # the CRI container log file (/var/log/pods/..., what kubelet's log collectors ship): time, stream, Partial/Full
    ("cri", re.compile(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(?:\.\d+)?(?:Z|[+-]\d\d:\d\d) (?:stdout|stderr) [PF] ")),
    # AllenAI's loggers (OLMo, OLMo-core, Dolma): "%(asctime)s\t%(hostname)s:%(local_rank)s\t..."
    (
        "host-local-rank",
        re.compile(r"\d{4}-\d\d-\d\d \d\d:\d\d:\d\d[.,]\d{3}\t(?P<host><(?:HOST|POD|IP)_\d+>|[\w.-]+):(?P<local_rank>\d+)\t"),
    ),
    ("timestamp", re.compile(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(?:\.\d+)?(?:Z|[+-]\d\d:?\d\d)?:?\s")),
    # Open MPI's --tag-output "[job,rank]<stderr>:"; horovodrun (Gloo) "[rank]<stderr>:"
    ("mpi", re.compile(r"\[(?:(?P<job>\d+),)?(?P<rank>\d+)\]<(?:stdout|stderr)>:\s?")),
    # SageMaker's mpirun (sagemaker-training-toolkit): "[1,mpirank:7,algo-2]<stderr>:", the stream tag sometimes left out
    (
        "sagemaker-mpi",
        re.compile(r"\[\d+,mpirank:(?P<rank>\d+),(?P<host><(?:HOST|POD|IP)_\d+>|[\w.-]+)\](?:<(?:stdout|stderr)>)?:\s?"),
    ),
    ("torchrun", re.compile(rf"\[(?:{_WORDS})(?P<rank>\d+)\]:\s?")),
    ("lightning", re.compile(r"\[rank: (?P<rank>\d+)\]\s?")),
    ("kubectl", re.compile(r"\[pod/(?P<host>[^/\]\s]+)/[^\]\s]*\]\s")),
    # pdsh (DeepSpeed's multi-node runner) names each line's node as the hostfile does; "localhost" is never masked
    ("host", re.compile(r"(?P<host><(?:HOST|POD|IP)_\d+>|worker-\d+|node-?\d+|localhost):\s")),
    # vLLM's worker processes "(VllmWorker TP1 pid=7)", "(Worker_TP1 pid=7)": the TP rank is the global rank only
    # when it is the one parallel dimension named ("Worker_PP1_TP0", "EngineCore_DP0": peeled, no rank)
    ("vllm", re.compile(r"\((?:VllmWorker |Worker_)TP(?P<rank>\d+) pid=\d+\)\s?")),
    # Ray's and vLLM's other process tags "(RayTrainWorker pid=7, ip=<IP_1>)", "(EngineCore_DP0 pid=7)"
    ("process", re.compile(r"\((?:\w+(?: [A-Z]{2}\d+)? )?pid=\d+(?:, ip=(?P<host><IP_\d+>|[\d.]+))?\)\s?")),
    # SGLang's logger "[2025-03-29 18:56:25 TP1] ": the same rule for its TP rank ("DP0 TP1", "PP1 TP0": no rank)
    ("sglang", re.compile(r"\[\d{4}-\d\d-\d\d \d\d:\d\d:\d\d TP(?P<rank>\d+)\]\s?")),
    ("sglang-parallel", re.compile(r"\[\d{4}-\d\d-\d\d \d\d:\d\d:\d\d(?: [A-Z]{2}\d+)+\]\s?")),
    ("srun", re.compile(r"\s{0,4}(?P<rank>\d{1,5}): ")),
    # a pasted log quoted in Markdown or e-mail ("> [rank3]: ..."): the quote marker is no part of what was printed
    ("quote", QUOTE),
]
"""Every launcher prefix, in the order they are tried at the start of a line."""

LEADING_PREFIXES = "(?:" + "|".join(re.sub(r"\(\?P<\w+>", "(?:", p.pattern) for _, p in PREFIXES) + ")*"
"""Any run of launcher prefixes at a line's start (their groups unnamed, so they can sit inside another pattern)."""


@cache
def anchored_on_body(pattern: str) -> str:
    """A signature anchored with ``^`` on its message's start, made to allow launcher prefixes before it.

    ``^loss_dict = ...`` must also match ``[rank3]: loss_dict = ...`` or ``2024-05-01T10:00:00Z loss_dict = ...``:
    an anchor means the start of what the program printed, not of the line the launcher wrote. Every anchor counts,
    in any branch (``...|^\\s*Exception: ...``); a ``^`` escaped or inside a character class is no anchor.
    """
    out: list[str] = []
    in_class = escaped = False
    for i, char in enumerate(pattern):
        if escaped:
            escaped = False
        elif char == "\\":
            escaped = True
        elif in_class:
            in_class = char != "]" or pattern[i - 1] == "[" or pattern[i - 2 : i] == "[^"
        elif char == "[":
            in_class = True
        elif char == "^":
            out.append(f"^{LEADING_PREFIXES}")
            continue
        out.append(char)
    return "".join(out)


RANK_CENSUS: list[tuple[str, re.Pattern[str]]] = [
    *((f"[{word}", re.compile(rf"\[{word}(\d+)\]:")) for word in RANK_WORDS),
    ("[rank: ", re.compile(r"\[rank: (\d+)\]")),
    ("]<std", re.compile(r"[,\[](\d+)\]<std")),
    (",mpirank:", re.compile(r",mpirank:(\d+),")),
]
"""(literal, pattern) per prefix style, for counting ranks over a whole chunk: the literal lets a chunk skip the pattern."""

NCCL_PREFIX = re.compile(r"(?P<host><HOST_\d+>|[\w.-]+):(?P<pid>\d+):\d+ \[(?P<dev>\d+)\] ")
"""NCCL's own prefix ``host:pid:tid [cuda device]`` (not a launcher's): the device is not the rank, the pid ties to one."""

SRUN_RANK = re.compile(r"^\s{0,4}(\d{1,5}): ", re.M)
"""``srun --label``'s task prefix, over a whole chunk."""

_K8S_INDEX = re.compile(r"-(?:master|worker|launcher)-(\d+)\b")
MAX_STACKED = 4


def split_prefix(text: str) -> tuple[int | None, str | None, str]:
    """Peel launcher prefixes: (rank, host, body)."""
    rank, _, host, body = split_prefix_local(text)
    return rank, host, body


def split_prefix_local(text: str) -> tuple[int | None, int | None, str | None, str]:
    """Peel launcher prefixes: (rank, local rank, host, body); a logger column that names only the local rank gives it."""
    rank: int | None = None
    local_rank: int | None = None
    host: str | None = None
    body = text
    for _ in range(MAX_STACKED):
        for name, pattern in PREFIXES:
            match = pattern.match(body)
            if not match:
                continue
            groups = match.groupdict()
            if groups.get("rank") is not None:
                rank = int(groups["rank"])  # the innermost prefix names the global rank (srun's "1:" is a task)
            if groups.get("local_rank") is not None:
                local_rank = int(groups["local_rank"])
            if groups.get("host") and host is None:
                host = groups["host"]
                k8s = _K8S_INDEX.search(host) if name == "kubectl" else None
                if k8s and rank is None:
                    rank = int(k8s.group(1))
            body = body[match.end() :]
            break
        else:
            break
    return rank, local_rank, host, body


def body_of(text: str) -> str:
    """The line without its launcher prefixes."""
    return split_prefix(text)[2]


def interleaved_rank(text: str, position: int) -> int | None:
    """When unbuffered output of two ranks shares one line, the rank whose prefix comes last before ``position``."""
    prefixes = [(m.start(), int(m.group(1))) for m in RANK_PREFIX.finditer(text, 0, position)]
    return prefixes[-1][1] if len(prefixes) > 1 or (prefixes and prefixes[0][0] > 0) else None
