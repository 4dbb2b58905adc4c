"""Names that look like hosts but identify nobody: public service domains, Python attribute names."""

from __future__ import annotations

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
        "discord.com",
        "discordapp.com",
        "telegram.org",
        "office.com",
        "office365.com",
        "slack.com",
        "storage.googleapis.com",
        "kubernetes.io",
        "k8s.io",
    }
)


def is_public_domain(name: str) -> bool:
    """Tell whether ``name`` is a public service domain or one of its subdomains."""
    parts = name.lower().rstrip(".").split(".")[-4:]
    return any(".".join(parts[i:]) in PUBLIC_DOMAINS for i in range(len(parts) - 1))


# First labels that make a two-label name a Python attribute (``self.net``), not a host.
CODE_NAMES = frozenset(
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
