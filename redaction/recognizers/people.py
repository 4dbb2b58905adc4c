"""Account and person names: SLURM users, W&B entities, commit authors."""

from __future__ import annotations

import re

from redaction.recognizers.base import LogRecognizer

_NAME = r"[A-Za-z0-9_][A-Za-z0-9._-]*"
_SQUEUE_STATES = r"(?:R|PD|CG|CD|CF|CA|F|TO|NF|PR|S|ST|RQ|RS|RV|SE|SI|SO|OOM|BF|DL|RD|RF|RH)"
_SACCT_STATES = (
    r"(?:FAILED|COMPLETED|CANCELLED(?: by \d+)?|RUNNING|PENDING|TIMEOUT|OUT_OF_MEMORY|NODE_FAIL|"
    r"PREEMPTED|BOOT_FAIL|DEADLINE|REQUEUED|SUSPENDED)"
)


class SlurmUserRecognizer(LogRecognizer):
    """SLURM user and account names in env vars, scontrol/sacct/squeue output and commands."""

    ENTITY = "USER"
    FLAGS = re.MULTILINE
    PATTERNS = (
        ("env", rf"\b(?:SLURM_JOB_USER|SBATCH_USER|SLURM_JOB_ACCOUNT|SLURM_ACCOUNT)=(?P<USER>{_NAME})", 0.8),
        # the login's own variables: USER=, LOGNAME=, USERNAME=, SUDO_USER=, PBS_O_LOGNAME=
        ("login env", rf"(?<![\w])(?:USER|LOGNAME|USERNAME|SUDO_USER|PBS_O_LOGNAME|LSB_JOB_USER)=[\"']?(?P<USER>{_NAME})", 0.8),
        # SLURM: "*** JOB 1 ON node CANCELLED AT 2024-05-01T12:00:00 *** by alice", "CANCELLED by alice"
        ("cancelled by", r"\bCANCELLED(?: AT \S+)?(?: \*\*\*)? by (?P<USER>[A-Za-z_][A-Za-z0-9._-]*)", 0.8),
        ("scontrol", rf"\b(?:UserId|User|Account|user)=(?P<USER>{_NAME})", 0.7),
        ("oom", rf"\(user (?P<USER>{_NAME})\)", 0.8),
        ("cli", rf"\b(?:squeue|sacct|scancel|sprio|sshare|showq|qstat)\b[^|;\n]*?\s(?:-u|--user[= ])\s*(?P<USER>{_NAME})", 0.8),
        ("squeue row", rf"^\s*[0-9]+(?:_[0-9\[\]-]+)?\s+\S+\s+\S+\s+(?P<USER>{_NAME})\s+{_SQUEUE_STATES}\s+[0-9]", 0.6),
        ("sacct row", rf"^\s*[0-9]+(?:\.\w+)?\s+\S+\s+\S+\s+(?P<USER>{_NAME})\s+[0-9]+\s+{_SACCT_STATES}\b", 0.6),
    )
    PREFILTER = (
        r"SLURM_JOB_USER=|SBATCH_USER=|SLURM_JOB_ACCOUNT=|SLURM_ACCOUNT=",
        r"(?:USER|LOGNAME|USERNAME|SUDO_USER|PBS_O_LOGNAME|LSB_JOB_USER)=",
        r"CANCELLED(?: AT \S+)?(?: \*\*\*)? by ",
        r"\b(?:UserId|User|Account|user)=",
        r"\(user ",
        r"\b(?:squeue|sacct|scancel|sprio|sshare|showq|qstat)\b",
        rf"^\s*[0-9]+\S*\s+\S+\s+\S+\s+\S+\s+{_SQUEUE_STATES}\s+[0-9]",
        rf"^\s*[0-9]+\S*\s+\S+\s+\S+\s+\S+\s+[0-9]+\s+{_SACCT_STATES}",
    )

    def invalidate_result(self, pattern_text: str) -> bool | None:
        """Keep placeholders like ``(null)`` and the superuser."""
        return pattern_text.lower() in {"root", "null", "none", "n/a"}


# Groups every system has; they name nobody.
_SYSTEM_GROUPS = frozenset(
    {
        "root",
        "sudo",
        "adm",
        "wheel",
        "docker",
        "video",
        "render",
        "users",
        "plugdev",
        "audio",
        "dialout",
        "cdrom",
        "floppy",
        "lpadmin",
        "sambashare",
        "lxd",
        "kvm",
        "input",
        "systemd-journal",
        "staff",
        "admin",
        "nogroup",
        "nobody",
        "daemon",
        "bin",
        "sys",
        "disk",
        "tty",
        "games",
        "man",
        "mail",
        "netdev",
        "libvirt",
        "wireshark",
        "dip",
        "ssh",
    }
)


class IdOutputRecognizer(LogRecognizer):
    """``id`` output: ``uid=1000(alice) gid=1000(alice) groups=1000(alice),27(sudo)``: the names go."""

    ENTITY = "USER"
    PATTERNS = (("id", r"\b(?:e?uid)=[0-9]+\([^)\s]+\)(?:\s+[a-z]+=[0-9]+\([^)\s]+\)(?:,[0-9]+\([^)\s]+\))*)*", 0.8),)
    PREFILTER = (r"\buid=[0-9]+\(",)
    _NAME_RE = re.compile(r"\(([^)\s]+)\)")

    def spans(self, match: re.Match[str], groups: list[tuple[str, str]]) -> list[tuple[tuple[int, int], str]]:
        """Every name in parentheses but the system groups."""
        base = match.start()
        return [
            ((base + name.start(1), base + name.end(1)), self.entity)
            for name in self._NAME_RE.finditer(match.group())
            if name.group(1).lower() not in _SYSTEM_GROUPS
        ]


class WandbEntityRecognizer(LogRecognizer):
    """W&B entity (user or team) names in run URLs and the login banner."""

    ENTITY = "USER"
    PATTERNS = (
        ("run url", rf"(?i)\bwandb\.ai/(?P<USER>{_NAME})", 0.8),
        # an e-mail after "logged in as" is the e-mail recognizer's, whole
        ("logged in", rf"logged in as:? (?![^\s@]+@)(?P<USER>{_NAME})(?: \((?P<USER__2>{_NAME})\))?", 0.8),
    )
    PREFILTER = (r"(?i)wandb\.ai/", r"logged in as")

    def invalidate_result(self, pattern_text: str) -> bool | None:
        """Keep W&B's own site paths."""
        return pattern_text.lower() in {"site", "authorize", "settings", "home"}


class PersonNameRecognizer(LogRecognizer):
    """Person names where logs print them: commit authors and ``fullname`` fields."""

    ENTITY = "PERSON"
    PATTERNS = (
        (
            "author",
            r"\b(?:Author|Committer|Signed-off-by|Co-authored-by|Reviewed-by):\s*"
            r"(?P<PERSON>[A-Z][\w'.-]*(?: [A-Z][\w'.-]*){0,3})\s*<",
            0.8,
        ),
        (
            "name field",
            r"(?i)[\"']?(?:full_?name|display_?name|real_?name|person_?name)[\"']?\s*[:=]\s*[\"']"
            r"(?P<PERSON>[^\"'\n]{2,64})[\"']",
            0.8,
        ),
    )
    PREFILTER = (
        r"(?:Author|Committer|Signed-off-by|Co-authored-by|Reviewed-by):",
        r"(?i)(?:full_?name|display_?name|real_?name|person_?name)",
    )
