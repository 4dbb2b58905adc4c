"""Host names: FQDNs, cluster node names in the positions launchers print them, pod names."""

from __future__ import annotations

import re

from redaction.recognizers.base import LogRecognizer
from redaction.recognizers.names import CODE_NAMES, is_public_domain

_LABEL = r"[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?"
# Top-level domains that are not also common file extensions or Python attribute names:
# no .py .sh .so .pt .cc .md .in .info .run .int (``train.py``, ``logger.info``, ``torch.int``).
TLDS = (
    "com|net|org|edu|gov|mil|io|ai|co|dev|cloud|internal|local|localdomain|lan|corp|svc|"
    "us|uk|de|fr|jp|cn|kr|ca|au|ru|nl|ch|se|eu|sg|hk|tw|il|br|fi|dk|cz|nz|za|mx|ar|ac"
)
FQDN = rf"(?:{_LABEL}\.)+(?:{TLDS})"

_IMPORT_BEFORE = re.compile(r"(?:\bfrom|\bimport)\s+$")


class FqdnRecognizer(LogRecognizer):
    """Fully qualified host names (``gpu-node-017.cluster.internal``), minus public services."""

    ENTITY = "HOST"
    # A leading dot is allowed after a separator: ``no_proxy=localhost,.hpc.example.edu``.
    PATTERNS = (("fqdn", rf"(?<![\w-])(?<![\w.-]\.){FQDN}(?![\w(-]|\.[A-Za-z0-9])", 0.5),)
    PREFILTER = (rf"[A-Za-z0-9-]\.(?:{TLDS})\b",)

    def invalidate_result(self, pattern_text: str) -> bool | None:
        """Keep public service domains and Python attribute names readable."""
        labels = pattern_text.split(".")
        return is_public_domain(pattern_text) or (len(labels) == 2 and labels[0] in CODE_NAMES)

    def invalidate_context(self, text: str, start: int, end: int, entity: str) -> bool:
        """Keep module names after ``import``/``from``."""
        return bool(_IMPORT_BEFORE.search(text[max(0, start - 8) : start]))


# A short node name: hyphenated with a digit (``node-042``, ``worker-3``) or letters then
# two or more digits (``node07``, ``login01``). ``NODE`` is for Hyperscan prefilters;
# ``NODE_RE`` matches the same names in Python without backtracking (possessive
# quantifiers, one start per word): the nested repeats of ``NODE`` took quadratic time on a
# long run of hyphens and digits.
NODE = r"(?:[A-Za-z][A-Za-z0-9]*(?:-[A-Za-z0-9]+)*-[A-Za-z0-9]*[0-9][A-Za-z0-9-]*|[A-Za-z]{2,}[0-9]{2,}[A-Za-z0-9]*)"
NODE_RE = r"(?<![A-Za-z0-9-])(?:[A-Za-z][A-Za-z0-9]*+-(?=[A-Za-z0-9-]*?[0-9])[A-Za-z0-9-]*+|[A-Za-z]{2,}+[0-9]{2,}+[A-Za-z0-9]*+)"
# A host name of any shape, in a position that names a host (``hostname=``, NCCL prefixes).
NAME_RE = r"[A-Za-z][A-Za-z0-9_-]*+(?:\.[A-Za-z0-9][A-Za-z0-9_-]*+)*+"
# Names of that shape that are not hosts.
_NOT_NODE = re.compile(
    r"(?i)^(?:rank|local_?rank|default|step|epoch|iter|gpu|cuda|sm|python|py|fp|bf|int|uint|"
    r"b?float|port|a|h|v|l|t|k|b|rtx|layer|stage|e|w|i|pid|tid|job|seed|utf|sha|md|base|x|u|amd)-?[0-9]+$"
)
# GPU models and number formats that read like node names after "on"/"to": MI300X, GH200, L40S,
# A100-SXM4-80GB, H100-PCIe, tf32, e4m3.
_GPU_OR_DTYPE = re.compile(
    r"(?i)^(?:[abhlvtkpm][0-9]{1,4}[a-z]{0,2}|mi[0-9]{2,3}[a-z]?|g[hb][0-9]{2,3}|rtx[0-9]*|gtx[0-9]*|quadro[0-9]*|"
    r"tf32|bf16|fp[0-9]+|int[0-9]+|e[0-9]m[0-9])(?:-(?:sxm[0-9]?|pcie|nvl|hbm[0-9]*e?|[0-9]+gb))*$"
)
# Words after "host"/"node" that name no machine.
_NOT_HOSTS = frozenset(
    {
        "localhost",
        "none",
        "null",
        "unknown",
        "true",
        "false",
        "auto",
        "any",
        "all",
        "local",
        "default",
        "memory",
        "side",
        "device",
        "devices",
        "cpu",
        "gpu",
        "name",
        "names",
        "is",
        "not",
        "the",
        "a",
        "an",
        "to",
        "and",
        "or",
        "of",
        "in",
        "list",
        "file",
        "rank",
        "ranks",
        "process",
        "count",
        "ip",
        "addr",
        "address",
        "port",
        "id",
        "info",
        "mode",
        "hostname",
        "host",
        "node",
        "nodes",
        "set",
        "unset",
        "empty",
        "undefined",
        "nil",
        "n/a",
        "self",
        "this",
        "that",
    }
)


class HostPositionRecognizer(LogRecognizer):
    """Host names in the positions that name hosts; the shared checks that keep look-alikes.

    The positions are split over a few recognizers, each with its own prefilter, so that a
    candidate line runs only the patterns of the position the prefilter saw.
    """

    ENTITY = "HOST"
    FLAGS = re.MULTILINE

    def invalidate_result(self, pattern_text: str) -> bool | None:
        """Drop names of node shape that are ranks, devices, dtypes or versions, and public services."""
        return not is_node_name(pattern_text) or is_public_domain(pattern_text)

    def invalidate_context(self, text: str, start: int, end: int, entity: str) -> bool:
        """Keep ``root`` of a shell prompt, git commits after ``HEAD is now at``, CPU masks, words."""
        value = text[start:end]
        if entity == "USER":
            return value == "root"
        if value.lower() in _NOT_HOSTS or value.isupper() or value.startswith("$"):
            return True
        if _CPU_MASK.match(value) and _MASK_WORDS.search(text):
            return True  # "Setting affinity for GPU 0 to ffff0000,00000000"
        return bool(_GIT_BEFORE.search(text[max(0, start - 24) : start]))


class NodeNameRecognizer(HostPositionRecognizer):
    """Short cluster node names where launchers, schedulers and shells print them."""

    PATTERNS = (
        # kubectl logs --prefix and similar: "[pytorchjob-llm7b-master-0]:1:..."
        ("bracket prefix", r"^\[(?P<HOST>[A-Za-z][A-Za-z0-9.]*-[A-Za-z0-9.-]+)\]", 0.6),
        # srun: "srun: error: node-042: task 3: Exited with exit code 1"
        ("srun task", rf"(?P<HOST>{NODE_RE}): tasks? [0-9]", 0.6),
        ("srun error", rf"\b(?:srun|slurmstepd)(?:\[[0-9]+\])?: (?:error: )?(?P<HOST>{NAME_RE}): tasks? [0-9]", 0.65),
        # "on node07", "from worker-3", "to gke-pool-a100-3f9c-x7k2", "reported by dgx-07"
        ("preposition", rf"(?i)\b(?:on|from|to|at|by|node|host)\s+(?P<HOST>{NODE_RE})(?![\w.:/-])", 0.5),
        # Shell prompts: "pnowak@login2:~/mdgnn$ srun ...", "(venv) nina@nina-tower:~/ai$ ..."
        (
            "shell prompt",
            r"(?<![\w.@-])(?P<USER>[a-z_][a-z0-9_.-]*)@(?P<HOST>[A-Za-z0-9][A-Za-z0-9.-]*):(?:~|/)[^\s$#]*[$#](?=\s|$)",
            0.7,
        ),
        # EC2-style names carry the private address anywhere they appear: "ip-10-0-1-23"
        ("ec2 name", r"(?<![\w.-])(?P<HOST>ip-[0-9]{1,3}-[0-9]{1,3}-[0-9]{1,3}-[0-9]{1,3})(?![\w-])", 0.6),
        # SLURM node lists: "node[01-04]", "node-[017-024]", "gpu-a[1,3-5]"
        ("nodelist", r"(?<![\w-])(?P<HOST>[A-Za-z][A-Za-z0-9-]*\[[0-9]+[,-][0-9,-]*\])", 0.6),
    )
    PREFILTER = (
        r"^\[[A-Za-z][A-Za-z0-9.]*-",
        r": tasks? [0-9]",
        rf"(?i)\b(?:on|from|to|at|by|node|host)\s+{NODE}",
        r"[A-Za-z-]\[[0-9][0-9,-]*\]",
        r"ip-[0-9]{1,3}-[0-9]{1,3}-[0-9]{1,3}-[0-9]{1,3}",
        r"@[A-Za-z0-9][A-Za-z0-9.-]*:[~/]",
    )


class HostFieldRecognizer(HostPositionRecognizer):
    """Host names after the keys and calls that name one: ``MASTER_ADDR=``, ``hostname:``, rendezvous endpoints."""

    PATTERNS = (
        # MASTER_ADDR=kestrel: after = or : any name
        ("master addr any", rf"(?i)master[_-]?addr(?:ess)?[\"']?\]?\s*[:=]\s*[\"']?(?P<HOST>{NAME_RE})", 0.7),
        # MASTER_ADDR=..., --master_addr X, "MASTER_ADDR": "X", master_addr=X
        (
            "master addr",
            r"(?i)master[_-]?addr(?:ess)?[\"']?\]?\s*(?:[:=]\s*|\s+)[\"']?"
            r"(?P<HOST>[A-Za-z0-9](?=[A-Za-z0-9_.-]*[0-9.-])[A-Za-z0-9_.-]*[A-Za-z0-9])",
            0.7,
        ),
        # "host      : node07" (ChildFailedError), host=..., hostname: ..., HOSTNAME=...; not a sentence that goes on
        # after "host:" (Slurm's "from submit host: Operation not permitted": a capitalised word, then lower case)
        (
            "host field any",
            rf"(?i)(?<![\w-])(?:host_?name|host|node_?name)[\"']?[ \t]*[:=][ \t]*[\"']?"
            rf"(?-i:(?![A-Z][a-z]+[ \t]+[a-z]+\b(?![=:])))(?P<HOST>{NAME_RE})",
            0.6,
        ),
        (  # "node: set-zw04-pc133.mt" (Megatron's NaN check): a name with a digit or a dot after node
            "host field",
            r"(?i)\b(?:host_?name|host|node_?name|node)[\"']?\s*[:=]\s*[\"']?"
            r"(?P<HOST>[A-Za-z0-9](?=[A-Za-z0-9_.-]*[0-9.-])[A-Za-z0-9_.-]*[A-Za-z0-9])",
            0.6,
        ),
        # torchrun --rdzv_endpoint=host:port, --rdzv-endpoint host, tcp://host:port
        (
            "endpoint",
            rf"(?i)(?:rdzv[_-]endpoint|init[_-]method|dist[_-]url)[\"']?\s*[= :]\s*[\"']?(?:tcp://)?(?P<HOST>{NAME_RE})(?!:/)",
            0.7,
        ),
        ("tcp url", rf"(?i)\b(?:tcp|env)://(?P<HOST>{NAME_RE})(?=:[0-9])", 0.6),
        # explicit: "on host kestrel", "socket.gethostname() = kestrel"
        ("named host", rf"(?i)\b(?:on|from|at) (?:host|node|hostname)[ \t]+[\"']?(?P<HOST>{NAME_RE})", 0.6),
        ("gethostname", rf"gethostname\(\)[\"']?\s*(?:=|->|:|returned|is|==)?\s*[\"']?(?P<HOST>{NAME_RE})", 0.7),
        # DeepSpeed's launcher: --world_info=<base64 of {"host": [slots], ...}> holds every host name
        ("deepspeed world info", r"--world_info[= ](?P<HOST>[A-Za-z0-9+/]{8,}={0,2})", 0.8),
    )
    PREFILTER = (
        r"(?i)master[_-]?addr",
        r"(?i)(?:host_?name|host|node_?name|node)[\"']?\s*[:=]",
        r"(?i)(?:rdzv[_-]endpoint|init[_-]method|dist[_-]url)",
        r"(?i)(?:tcp|env)://[A-Za-z]",
        r"(?i)\b(?:on|from|at) (?:host|node|hostname)[ \t]",
        r"gethostname\(\)",
        r"--world_info[= ]",
    )


class LogPrefixHostRecognizer(HostPositionRecognizer):
    """Hosts in NCCL ``host:pid:tid [dev] NCCL`` prefixes, c10d's ``[host]:port`` and SLURM's ``*** JOB n ON host``."""

    PATTERNS = (
        # NCCL's "host:pid:tid [dev] NCCL" prefix names a host whatever its shape
        (
            "nccl prefix",
            r"(?<![\w.-])(?P<HOST>[A-Za-z0-9][A-Za-z0-9_-]*+(?:\.[A-Za-z0-9][A-Za-z0-9_-]*+)*+):[0-9]+:[0-9]+ \[[0-9]+\] NCCL ",
            0.9,
        ),
        # c10d: "failed to connect to [kestrel]:29500"
        ("bracket host port", rf"\[(?P<HOST>{NAME_RE})\]:[0-9]{{2,5}}\b", 0.6),
        # SLURM: "*** JOB 123 ON kestrel CANCELLED AT ..."
        ("slurm on", rf"\*\*\* (?:JOB|STEP) [0-9][0-9._A-Za-z]* ON (?P<HOST>{NAME_RE}) CANCELLED", 0.8),
    )
    PREFILTER = (
        # NCCL prefixes: digit-less names anywhere; others only behind a launcher prefix (at the
        # start of a line they are LinePrefixRecognizer's, at block level, much cheaper)
        r"(?:^|[^\w.-])[A-Za-z_.-]+:[0-9]+:[0-9]+ \[[0-9]+\] NCCL ",
        r"[\]:>Z ][A-Za-z0-9][A-Za-z0-9_.-]*:[0-9]+:[0-9]+ \[[0-9]+\] NCCL ",
        r"^[0-9][A-Za-z0-9_.-]*:[0-9]+:[0-9]+ \[[0-9]+\] NCCL ",
        r"\[[A-Za-z][A-Za-z0-9_.-]*\]:[0-9]{2}",
        r"\*\*\* (?:JOB|STEP) [0-9]",
    )


_CPU_MASK = re.compile(r"^[0-9a-fA-F]{8}$")
_MASK_WORDS = re.compile(r"(?i)affinity|cpumask|cpu mask|cpus_allowed")
_GIT_BEFORE = re.compile(r"(?i)(?:HEAD is now at|\bcommit|\bcheckout|\brevision|\bsha)\s+$")


def is_node_name(name: str) -> bool:
    """Tell whether a name of node shape can be a host (not a rank, device, GPU model, dtype, loopback)."""
    low = name.lower()
    return not (
        _NOT_NODE.match(name) or _GPU_OR_DTYPE.match(name) or low in {"localhost", "none", "null"} or low.startswith(("127.", "0.0.0.0"))
    )
