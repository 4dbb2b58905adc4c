"""Kubernetes pod, node and namespace names."""

from __future__ import annotations

from redaction.recognizers.base import LogRecognizer

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
_NOT_NAMESPACES = frozenset(
    {
        "default",
        "kube-system",
        "kube-public",
        "kube-node-lease",
        "kubeflow",
        "volcano-system",
        "pod",
        "pods",
        "node",
        "nodes",
        "job",
        "jobs",
        "deployment",
        "deployments",
        "service",
        "services",
        "statefulset",
        "replicaset",
        "daemonset",
        "pytorchjob",
        "pytorchjobs",
        "mpijob",
        "tfjob",
        "configmap",
        "secret",
        "event",
        "events",
    }
)


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
