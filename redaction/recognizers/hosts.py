"""Host names: FQDNs, cluster node names in the positions launchers print them, pod names."""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Callable

from redaction.recognizers.base import LogRecognizer

_LABEL = r"[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?"
# Top-level domains that are not also common file extensions or Python attribute names:
# no .py .sh .so .pt .cc .md .in .info .run .int (``train.py``, ``logger.info``, ``torch.int``).
TLDS = (
    "com|net|org|edu|gov|mil|io|ai|co|dev|cloud|internal|local|localdomain|lan|corp|svc|"
    "us|uk|de|fr|jp|cn|kr|ca|au|ru|nl|ch|se|eu|sg|hk|tw|il|br|fi|dk|cz|nz|za|mx|ar|ac"
)
FQDN = rf"(?:{_LABEL}\.)+(?:{TLDS})"

# Public services whose names identify no user or site; needed to read network errors.
PUBLIC_DOMAINS = frozenset(
    {
        "github.com",
        "githubusercontent.com",
        "gitlab.com",
        "bitbucket.org",
        "huggingface.co",
        "hf.co",
        "wandb.ai",
        "pytorch.org",
        "python.org",
        "pypi.org",
        "pythonhosted.org",
        "nvidia.com",
        "nvcr.io",
        "docker.io",
        "docker.com",
        "googleapis.com",
        "amazonaws.com",
        "openai.com",
        "anthropic.com",
        "google.com",
        "microsoft.com",
        "ubuntu.com",
        "debian.org",
        "anaconda.org",
        "anaconda.com",
        "conda.io",
        "readthedocs.io",
        "example.invalid",
        "ngc.nvidia.com",
        "gcr.io",
        "ghcr.io",
        "quay.io",
        "core.windows.net",
    }
)


def is_public_domain(name: str) -> bool:
    """Tell whether ``name`` is a public service domain or one of its subdomains."""
    parts = name.lower().rstrip(".").split(".")[-4:]
    return any(".".join(parts[i:]) in PUBLIC_DOMAINS for i in range(len(parts) - 1))


# First labels that make a two-label name a Python attribute (``self.net``), not a host.
_CODE_NAMES = frozenset(
    {
        "self",
        "cls",
        "model",
        "module",
        "torch",
        "nn",
        "np",
        "tf",
        "os",
        "sys",
        "args",
        "config",
        "cfg",
        "x",
        "y",
        "out",
        "ctx",
        "obj",
        "data",
        "batch",
        "trainer",
        "logger",
        "log",
        "super",
        "torchvision",
        "scipy",
        "skimage",
        "jax",
        "threading",
        "tensorflow",
        "utils",
        "main",
    }
)
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
        return is_public_domain(pattern_text) or (len(labels) == 2 and labels[0] in _CODE_NAMES)

    def invalidate_context(self, text: str, start: int, end: int, entity: str) -> bool:
        """Keep module names after ``import``/``from``."""
        return bool(_IMPORT_BEFORE.search(text[max(0, start - 8) : start]))


# A short node name: hyphenated with a digit (``node-042``, ``worker-3``) or letters then
# two or more digits (``node07``, ``login01``).
NODE = r"(?:[A-Za-z][A-Za-z0-9]*(?:-[A-Za-z0-9]+)*-[A-Za-z0-9]*[0-9][A-Za-z0-9-]*|[A-Za-z]{2,}[0-9]{2,}[A-Za-z0-9]*)"
# Names of that shape that are not hosts.
_NOT_NODE = re.compile(
    r"(?i)^(?:rank|local_?rank|default|step|epoch|iter|gpu|cuda|sm|python|py|fp|bf|int|uint|"
    r"b?float|port|a|h|v|l|t|k|b|rtx|layer|stage|e|w|i|pid|tid|job|seed|utf|sha|md|base|x|u|amd)-?[0-9]+$"
)


class NodeNameRecognizer(LogRecognizer):
    """Short cluster node names in the positions launchers and schedulers print them."""

    ENTITY = "HOST"
    FLAGS = re.MULTILINE
    PATTERNS = (
        # kubectl logs --prefix and similar: "[pytorchjob-llm7b-master-0]:1:..."
        ("bracket prefix", r"^\[(?P<HOST>[A-Za-z][A-Za-z0-9.]*-[A-Za-z0-9.-]+)\]", 0.6),
        # srun: "srun: error: node-042: task 3: Exited with exit code 1"
        ("srun task", rf"(?P<HOST>{NODE}): tasks? [0-9]", 0.6),
        # MASTER_ADDR=..., --master_addr X, "MASTER_ADDR": "X", master_addr=X
        (
            "master addr",
            r"(?i)master[_-]?addr(?:ess)?[\"']?\]?\s*(?:[:=]\s*|\s+)[\"']?"
            r"(?P<HOST>[A-Za-z0-9](?=[A-Za-z0-9_.-]*[0-9.-])[A-Za-z0-9_.-]*[A-Za-z0-9])",
            0.7,
        ),
        # "host      : node07" (ChildFailedError), host=..., hostname: ..., HOSTNAME=...
        (
            "host field",
            r"(?i)\b(?:host_?name|host|node_?name)[\"']?\s*[:=]\s*[\"']?"
            r"(?P<HOST>[A-Za-z0-9](?=[A-Za-z0-9_.-]*[0-9.-])[A-Za-z0-9_.-]*[A-Za-z0-9])",
            0.6,
        ),
        # "on node07", "from worker-3", "to gke-pool-a100-3f9c-x7k2", "reported by dgx-07"
        ("preposition", rf"(?i)\b(?:on|from|to|at|by|node|host)\s+(?P<HOST>{NODE})(?![\w.:/-])", 0.5),
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
        r"(?i)master[_-]?addr",
        r"(?i)(?:host|node_?name)[\"']?\s*[:=]",
        rf"(?i)\b(?:on|from|to|at|by|node|host)\s+{NODE}",
        r"[A-Za-z-]\[[0-9][0-9,-]*\]",
        r"ip-[0-9]{1,3}-[0-9]{1,3}-[0-9]{1,3}-[0-9]{1,3}",
        r"@[A-Za-z0-9][A-Za-z0-9.-]*:[~/]",
    )

    def invalidate_result(self, pattern_text: str) -> bool | None:
        """Drop names of node shape that are ranks, devices, dtypes or versions, and public services."""
        return not is_node_name(pattern_text) or is_public_domain(pattern_text)

    def invalidate_context(self, text: str, start: int, end: int, entity: str) -> bool:
        """Keep the superuser of a shell prompt: ``root`` names nobody."""
        return entity == "USER" and text[start:end] == "root"


def is_node_name(name: str) -> bool:
    """Tell whether a name of node shape can be a host (not a rank, device, dtype, loopback)."""
    low = name.lower()
    return not (_NOT_NODE.match(name) or low in {"localhost", "none", "null"} or low.startswith(("127.", "0.0.0.0")))


# how many lines a digit-less name must start before it is taken for a pdsh/DeepSpeed host prefix
PREFIX_REPEATS = 5
# mpirun --tag-output puts its own tag first: "[1,2]<stdout>:gpu-dgx-a7:51235:51235 [2] NCCL ..."
_MPI_TAG = r"(?:\[[0-9]+,[0-9]+\]<std(?:out|err)>:)?"


class LinePrefixRecognizer(LogRecognizer):
    """Launcher prefixes on every line: pdsh/srun ``node07: ...``, NCCL ``node-17:3121:3121 [0]``.

    In a multi-node log these start nearly every line, so instead of going through the
    prefilter the redactor hands the lines between candidates to :meth:`sub_block`, one
    regex pass each.
    """

    ENTITY = "HOST"
    PATTERNS = (("line prefix", rf"^{_MPI_TAG}(?P<HOST>{NODE})(?=:[ \t]|:[0-9]+:[0-9]+[ \t])", 0.95),)
    BLOCK_LEVEL = True
    # Each line is matched with the newline before it: a literal start lets ``re`` skip ahead
    # to line starts instead of trying every position (5x faster than ``^`` with MULTILINE).
    _REPEATED_RE = re.compile(rb"\n([a-z][a-z0-9]*(?:-[a-z0-9]+)+): ")
    _BLOCK_RE = re.compile(rf"\n({_MPI_TAG})(?=[A-Za-z][A-Za-z0-9-]*:)({NODE})(?=:[ \t]|:[0-9]+:[0-9]+[ \t])".encode())

    def sub_block(self, data: bytes, replace: Callable[[bytes], bytes]) -> bytes:
        """Replace the launcher prefix of every line in ``data`` (which starts at a line start)."""
        if b":" not in data:
            return data
        masked, found = self._BLOCK_RE.subn(lambda m: b"\n" + m.group(1) + replace(m.group(2)), b"\n" + data)
        masked, named = self._sub_repeated(masked if found else b"\n" + data, replace)
        return masked[1:] if found or named else data

    def _sub_repeated(self, data: bytes, replace: Callable[[bytes], bytes]) -> tuple[bytes, int]:
        """Hosts without digits (``gpu-node-a: ``) count as a launcher prefix when they start many lines."""
        counts = Counter(self._REPEATED_RE.findall(data))
        hosts = {name for name, n in counts.items() if n >= PREFIX_REPEATS and is_node_name(name.decode())}
        if not hosts:
            return data, 0
        return self._REPEATED_RE.subn(
            lambda m: b"\n" + (replace(m.group(1)) if m.group(1) in hosts else m.group(1)) + b": ", data)

    def invalidate_result(self, pattern_text: str) -> bool | None:
        """Drop names of node shape that are ranks, devices, dtypes or versions."""
        return not is_node_name(pattern_text)


_ROLE = r"(?:worker|master|launcher|head|chief|ps|evaluator|server|driver|executor|trainer)"
POD = (
    rf"[a-z0-9]+(?:-[a-z0-9]+)*-{_ROLE}(?:-[a-z0-9]+)+"
    r"|(?:[a-z0-9]+-)+(?=[a-z]*[0-9])[a-z0-9]{5,10}-[a-z0-9]{5}"
)


class PodRecognizer(LogRecognizer):
    """Kubernetes pod and node names: ``llama-train-worker-3-7f9c6d5b8-xk2lp``, ``gke-...``."""

    ENTITY = "HOST"
    PATTERNS = (
        ("pod name", rf"(?<![\w./@-])(?:{POD})(?![\w.-])", 0.5),
        ("gke node", r"(?<![\w./-])gke-[a-z0-9-]+-[a-z0-9]{4}(?![\w.-])", 0.6),
        (
            "pod context",
            r"(?i)\b(?:pods?|nodes?)[/ =]+\"?(?:[a-z0-9-]+/)?(?P<HOST>[a-z0-9]+(?:-[a-z0-9]+)+)",
            0.5,
        ),
        # Volcano/Kubeflow: "job finetune-emma-20240501 task worker pod ..."
        ("job name", r"\bjob (?P<JOB>[a-z0-9]+(?:-[a-z0-9]+)+) (?=task|pod)", 0.6),
        ("assigned", r"assigned (?:[a-z0-9-]+/)?(?P<HOST>[a-z0-9-]+) to (?P<HOST__2>[a-z0-9-]+)", 0.6),
    )
    PREFILTER = (
        rf"-{_ROLE}-",
        r"[a-z0-9]{5,10}-[a-z0-9]{5}",
        r"gke-",
        r"(?i)\b(?:pods?|nodes?)[/ =]",
        r"assigned ",
        r"\bjob [a-z0-9]+-",
    )

    def invalidate_result(self, pattern_text: str) -> bool | None:
        """Require a digit: a pod name carries a replica index or a hash."""
        return not any(c.isdigit() for c in pattern_text)


# Namespaces Kubernetes creates itself or that name nobody, and resource kinds (``pod/<name>``).
_NOT_NAMESPACES = frozenset({
    "default", "kube-system", "kube-public", "kube-node-lease", "kubeflow", "volcano-system",
    "pod", "pods", "node", "nodes", "job", "jobs", "deployment", "deployments", "service", "services", "statefulset",
    "replicaset", "daemonset", "pytorchjob", "pytorchjobs", "mpijob", "tfjob", "configmap", "secret", "event", "events",
})


class NamespaceRecognizer(LogRecognizer):
    """Kubernetes namespaces, which often name a team or a person: ``namespace "research-cdiaz"``, ``ns/pod``."""

    ENTITY = "NAMESPACE"
    PATTERNS = (
        ("namespace", r"\b(?:namespace[= :]+\"?|kubectl\b.*?(?:-n|--namespace)[= ])(?P<NAMESPACE>[a-z0-9][a-z0-9-]{1,62})", 0.6),
        ("namespace of pod", rf"(?<![\w./-])(?P<NAMESPACE>[a-z0-9][a-z0-9-]{{1,62}})/(?P<HOST>{POD})(?![\w.-])", 0.55),
    )
    PREFILTER = (r"namespace", r"kubectl", r"[a-z0-9]/[a-z0-9]+(?:-[a-z0-9]+)*-(?:worker|master|launcher)-")

    def invalidate_result(self, pattern_text: str) -> bool | None:
        """Keep Kubernetes' own namespaces."""
        return pattern_text in _NOT_NAMESPACES

