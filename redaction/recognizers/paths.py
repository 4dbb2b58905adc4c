"""User names in home paths, and object-store bucket names."""

from __future__ import annotations

from redaction.recognizers.base import LogRecognizer

# Directory names under a home or cluster-filesystem root that are not users.
_NOT_USERS = frozenset(
    {
        "shared",
        "public",
        "root",
        "default",
        "guest",
        "data",
        "datasets",
        "dataset",
        "models",
        "checkpoints",
        "cache",
        "tmp",
        "temp",
        "projects",
        "project",
        "common",
        "scratch",
        "users",
        "home",
        "group",
        "groups",
        "apps",
        "software",
        "jusers",
    }
)


class HomePathRecognizer(LogRecognizer):
    """``/home/<user>``, ``/Users/<user>``, ``/scratch/users/<user>``, ``C:\\Users\\<user>``."""

    ENTITY = "USER"
    PATTERNS = (
        (
            "home path",
            r"(?i)(?:/home|/homes|/users|\\users|/u)[/\\](?-i:[A-Z][A-Z0-9_-]*[/\\])?(?P<USER>[A-Za-z0-9_][A-Za-z0-9._-]*[A-Za-z0-9_])"
            r"(?=[/\\'\":\s]|$)",
            0.8,
        ),
        # cluster file systems keep per-user trees under well-known roots: /scratch/<user>,
        # /fsx/<user>, /checkpoint/<user>, /private/home/<user>, /lustre/<fs>/<user>, /gpfs/<fs>/<user>
        (
            "cluster path",
            r"(?<![\w.-])/(?:scratch|fsx|checkpoint|private/home|(?:lustre|gpfs|nfs)/[A-Za-z0-9_-]+|"
            r"p/(?:scratch|project|largedata|fastdata|arch)/[A-Za-z0-9_-]+|p/home/jusers|global/homes/[a-z]|"
            r"global/u[12]/[a-z]|pscratch/sd/[a-z]|global/cfs/cdirs/[A-Za-z0-9_-]+(?:/users)?)/"
            r"(?P<USER>[a-z][a-z0-9._-]{1,30}[a-z0-9])(?=/)",
            0.6,
        ),
    )
    PREFILTER = (
        r"(?i)(?:/home|/homes|/users|\\users|/u)[/\\][A-Za-z0-9_]",
        r"/(?:scratch|fsx|checkpoint|lustre|gpfs|nfs|p/home|global/homes|global/u[12]|pscratch|global/cfs)/",
    )

    def invalidate_result(self, pattern_text: str) -> bool | None:
        """Keep shared, non-personal directories."""
        return pattern_text.lower() in _NOT_USERS


class BucketRecognizer(LogRecognizer):
    """Bucket and container names in object-store URIs and URLs."""

    ENTITY = "BUCKET"
    PATTERNS = (
        (
            "store uri",
            r"(?i)\b(?:s3[an]?|gs|gcs|az|abfss?|wasbs?|adl|oss|cos|r2|minio)://"
            r"(?P<BUCKET>[A-Za-z0-9][A-Za-z0-9._-]*(?:@[A-Za-z0-9][A-Za-z0-9-]*)?)",
            0.8,
        ),
        (
            "s3 virtual host",
            r"(?i)(?<![\w.-])(?P<BUCKET>[a-z0-9][a-z0-9.-]*[a-z0-9])\.s3(?:[.-][a-z0-9-]+)?\.amazonaws\.com",
            0.8,
        ),
        (
            "s3 path style",
            r"(?i)//s3(?:[.-][a-z0-9-]+)?\.amazonaws\.com/(?P<BUCKET>[a-z0-9][a-z0-9._-]*)",
            0.8,
        ),
        ("gcs url", r"(?i)storage\.(?:googleapis|cloud\.google)\.com/(?P<BUCKET>[a-z0-9][a-z0-9._-]*)", 0.8),
        ("gcs api", r"(?i)/storage/v1/b/(?P<BUCKET>[a-z0-9][a-z0-9._-]*)", 0.8),
        (
            "azure account",
            r"(?i)(?<![\w.-])(?P<BUCKET>[a-z0-9]{3,24})\.(?:blob|dfs|file|queue|table)\.core\.windows\.net",
            0.8,
        ),
    )
    PREFILTER = (
        r"(?i)(?:s3[an]?|gs|gcs|az|abfss?|wasbs?|adl|oss|cos|r2|minio)://",
        r"(?i)amazonaws\.com",
        r"(?i)storage\.(?:googleapis|cloud\.google)\.com/",
        r"(?i)/storage/v1/b/",
        r"(?i)\.core\.windows\.net",
    )

    def invalidate_result(self, pattern_text: str) -> bool | None:
        """Keep the generic API host labels that the path-style rules can catch."""
        return pattern_text.lower() in {"storage", "v1", "download"}
