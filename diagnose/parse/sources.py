"""What a log file's path says, and how it is shown: rank and host hints, and the masked name.

Paths carry identities too (``node07/stderr.log``, ``llama-train-worker-3.log``): a path part that
looks like a host or pod name is masked through the redactor like a MASTER_ADDR value, so it gets
the same pseudonym as in the text. Generic names (``rank_3.log``, ``worker-3.out``, ``stderr.log``) and
names without digits (``train.log``, ``multi-rank-oom.log``) stay.
"""

from __future__ import annotations

import re
from pathlib import PurePath
from typing import TYPE_CHECKING, Protocol

if TYPE_CHECKING:
    from diagnose.parse.ingest import Source

_GENERIC = re.compile(r"^(?:(?:rank|worker|proc|process|task|gpu|local_rank|part|slurm|attempt)[-_.]?\d+|\d+|[A-Za-z_]+)$", re.I)
_FILE_RANK = re.compile(r"(?:rank|proc|process|worker|gpu)[-_.]?(\d+)$|^(\d+)$", re.I)
_DIR_RANK = re.compile(r"^rank[-_.]?(\d+)$", re.I)  # Open MPI --output-filename: 1/rank.5/stderr
_ATTEMPT = re.compile(r"^attempt_\d+$")  # torchrun --log-dir: <run id>/attempt_0/<local rank>/stderr.log
_POD_INDEX = re.compile(r"-(master|worker)-(\d+)$")
_LOG_SUFFIXES = (".log", ".out", ".err", ".txt", ".gz", ".stderr", ".stdout")


class _LineRedactor(Protocol):
    def redact_line(self, line: str) -> str: ...


def _stem(part: str) -> tuple[str, str]:
    suffix = ""
    while part.endswith(_LOG_SUFFIXES):
        cut = part.rfind(".")
        part, suffix = part[:cut], part[cut:] + suffix
    return part, suffix


def _mask_as_host(value: str, redactor: _LineRedactor) -> str:
    return redactor.redact_line(f"MASTER_ADDR={value}").split("=", 1)[1]


def masked_name(name: str, redactor: _LineRedactor) -> str:
    """The source name as shown anywhere: secrets and host-like parts masked."""
    parts = []
    for part in PurePath(name).parts:
        stem, suffix = _stem(redactor.redact_line(part))
        keep = _GENERIC.match(stem) or stem.startswith("<") or not any(ch.isdigit() for ch in stem)
        parts.append((stem if keep else _mask_as_host(stem, redactor)) + suffix)
    return "/".join(parts)


def hints(name: str, redactor: _LineRedactor, *, has_master: bool) -> tuple[int | None, str | None]:
    """(rank, masked host) a path suggests: rank_3.log -> rank 3; pod-worker-2 -> rank 3 when a master pod exists."""
    path = PurePath(name)
    stem, _ = _stem(path.name)
    rank: int | None = None
    pod = _POD_INDEX.search(stem)
    match = _FILE_RANK.search(stem)
    if pod:
        rank = int(pod.group(2)) + (1 if has_master and pod.group(1) == "worker" else 0)
    elif match:
        rank = int(next(g for g in match.groups() if g is not None))
    elif len(path.parts) >= 3 and _ATTEMPT.match(path.parts[-3]) and path.parts[-2].isdigit():
        rank = int(path.parts[-2])  # torchrun's local rank: the global one on a single node
    else:
        in_dirs = [m for m in (_DIR_RANK.match(part) for part in path.parts[:-1]) if m]
        rank = int(in_dirs[-1].group(1)) if in_dirs else None
    host = None
    for i, part in enumerate(path.parts[:-1]):
        run_id = i + 1 < len(path.parts) and bool(_ATTEMPT.match(path.parts[i + 1]))  # torchrun's <run id>/attempt_0
        if any(ch.isdigit() for ch in part) and not _GENERIC.match(part) and not run_id:
            host = _mask_as_host(part, redactor)
    return rank, host


def ordered_sources(sources: list[Source], redactor: _LineRedactor) -> list[tuple[Source, int | None, str | None]]:
    """(source, rank hint, host hint) in a canonical order: by the rank a file name gives, then by name.

    A number in a file name is a rank only among several files (a directory of per-rank logs); a single
    file's name (``016.log``) never sets its rank. The order does not depend on how the files were given,
    and renaming files without changing the ranks their names give does not change it.
    """
    has_master = any("master-0" in s.name for s in sources)
    hinted = [(source, *hints(source.name, redactor, has_master=has_master)) for source in sources]
    if len(sources) <= 1:
        hinted = [(source, None, host) for source, _, host in hinted]
    return sorted(hinted, key=lambda item: (item[1] is None, item[1] or 0, PurePath(item[0].name).name, item[0].name))
