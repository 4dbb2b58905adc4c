"""Add one real-log case to ``evals/real/``, checked, with its split decided by rule, not by hand.

    python evals/tools/add_case.py r3370 --source URL --log posted.txt --class cuda-oom \\
        --evidence 12,13 --format torchrun --rank 3 --rank-proven --why "..." [--accept unknown] [--tags a,b]

``--logs DIR`` instead of ``--log FILE`` for a folder of per-rank or per-node files (evidence as ``file:line``).

The rules it enforces (evals/README.md):
- the split is the parity of the SHA-1 of the source URL (even: dev, odd: test), so nobody chooses where a
  case lands after seeing it;
- a source already in the corpus is refused (one report, one case), and so is a repository of committed log files
  already in the corpus (its other files are near twins of the first);
- the class and every accepted id are encyclopedia entries (or ``unknown``); every evidence line exists and is
  not blank; a proven rank needs a rank.
- with ``--dev-only`` a case whose source falls in ``test`` is refused before anything is read: logs chosen for being
  missed by the engine (a hunt for wordings no signature matches) would bias ``test`` low, so they go to ``dev`` only.
The log is copied byte for byte. Nothing here runs the engine: a case is labeled before anyone scores it.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import re
import shutil
import sys
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parents[2]
REAL = ROOT / "evals" / "real"
ENTRIES = ROOT / "kb" / "entries"
CASE_ID = re.compile(r"^r\d{4}$")
COMMITTED_FILE = re.compile(r"^https://(?:github\.com|raw\.githubusercontent\.com)/([^/]+/[^/]+)/(?:blob/|raw/|tree/)?")
FORMATS = ("torchrun", "slurm", "deepspeed", "lightning", "accelerate", "mpi", "kubernetes", "plain")


def split_of(source: str) -> str:
    """The split a source URL falls in: even SHA-1 parity is dev, odd is test."""
    return "dev" if int(hashlib.sha1(source.encode()).hexdigest(), 16) % 2 == 0 else "test"


def committed_repo(source: str) -> str | None:
    """The ``owner/name`` of a log file committed to a repository (not an issue thread), else None."""
    if "/issues/" in source or "/pull/" in source or "/discussions/" in source:
        return None
    match = COMMITTED_FILE.match(source)
    return match.group(1).lower() if match else None


def corpus_sources() -> dict[str, str]:
    """Every source already in the corpus, with the case that holds it."""
    sources: dict[str, str] = {}
    for label in sorted(REAL.glob("*/label.yaml")):
        source = yaml.safe_load(label.read_text(encoding="utf-8")).get("source")
        if source:
            sources[source] = label.parent.name
    return sources


def entry_ids() -> set[str]:
    """The encyclopedia's entry ids, and ``unknown``."""
    return {path.stem for path in ENTRIES.glob("*.md")} | {"unknown"}


def evidence_problems(evidence: list[int | str], log: Path | None, logs: Path | None) -> list[str]:
    """What is wrong with the evidence lines: a line that is not in the log, or is blank."""
    problems = []
    for item in evidence:
        path: Path | None
        if logs is not None:
            name, _, number = str(item).rpartition(":")
            path = logs / name
        else:
            name, number, path = "log.txt", str(item), log
        if path is None or not path.is_file() or not number.isdigit():
            problems.append(f"evidence {item!r}: no such file or line number")
            continue
        lines = path.read_bytes().decode("utf-8", "replace").split("\n")  # numbered as the engine and grep -n do
        index = int(number)
        if not 1 <= index <= len(lines) or not lines[index - 1].strip():
            problems.append(f"evidence {item!r}: line {index} of {name} is missing or blank")
    return problems


def parse_evidence(text: str, folder: bool) -> list[int | str]:
    """``12,13`` for one log, ``rank3.log:12,rank0.log:40`` for a folder."""
    items = [item.strip() for item in text.split(",") if item.strip()]
    return list(items) if folder else [int(item) for item in items]


def label_text(fields: dict[str, object]) -> str:
    """The label in the corpus's own layout: one key a line, lists and strings as JSON (valid YAML)."""
    lines = []
    for key, value in fields.items():
        if value is None:
            lines.append(f"{key}: null")
        elif isinstance(value, bool):
            lines.append(f"{key}: {'true' if value else 'false'}")
        elif isinstance(value, (int, list)) or key == "why":
            lines.append(f"{key}: {json.dumps(value, ensure_ascii=False)}")
        else:
            lines.append(f"{key}: {value}")
    return "\n".join(lines) + "\n"


def build(args: argparse.Namespace) -> tuple[dict[str, object], list[str]]:
    """The label's fields and every rule the case breaks."""
    problems = []
    if not CASE_ID.match(args.case_id):
        problems.append(f"case id {args.case_id!r}: want r and four digits")
    elif (REAL / args.case_id).exists():
        problems.append(f"case {args.case_id} exists")
    known = corpus_sources()
    if args.source in known:
        problems.append(f"source already in the corpus as {known[args.source]}")
    repo = committed_repo(args.source)
    if repo and any(committed_repo(source) == repo for source in known):
        problems.append(f"repository {repo} already gives the corpus a committed log")
    ids = entry_ids()
    for name in [args.class_name, *args.accept]:
        if name not in ids:
            problems.append(f"{name!r} is no encyclopedia entry")
    if args.format not in FORMATS:
        problems.append(f"format {args.format!r}: one of {', '.join(FORMATS)}")
    if args.rank_proven and args.rank is None:
        problems.append("--rank-proven needs --rank")
    folder = args.logs is not None
    evidence = parse_evidence(args.evidence, folder)
    problems += evidence_problems(evidence, args.log, args.logs)
    fields: dict[str, object] = {"class": args.class_name}
    if args.accept:
        fields["accept"] = args.accept
    fields |= {
        "initiating_rank": args.rank,
        "rank_proven": bool(args.rank_proven),
        "evidence": evidence,
        "format": args.format,
        "split": split_of(args.source),
        "origin": "real",
        "source": args.source,
        "tags": args.tags,
        "secrets": [],
        "why": args.why,
    }
    return fields, problems


def write(case_id: str, fields: dict[str, object], log: Path | None, logs: Path | None) -> Path:
    """Copy the log byte for byte and write the label; the case's folder."""
    folder = REAL / case_id
    folder.mkdir(parents=True)
    if logs is not None:
        shutil.copytree(logs, folder / "logs")
    elif log is not None:
        shutil.copyfile(log, folder / "log.txt")
    (folder / "label.yaml").write_text(label_text(fields), encoding="utf-8")
    return folder


def main(argv: list[str] | None = None) -> int:
    """Check the case; write it when it breaks no rule. Exit 0 written, 2 refused."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("case_id")
    parser.add_argument("--source", required=True, help="the URL of the report or committed file")
    given = parser.add_mutually_exclusive_group(required=True)
    given.add_argument("--log", type=Path, help="the log as posted (prose around it may be dropped)")
    given.add_argument("--logs", type=Path, help="a folder of per-rank or per-node files")
    parser.add_argument("--class", dest="class_name", required=True)
    parser.add_argument("--accept", type=lambda s: [x for x in s.split(",") if x], default=[])
    parser.add_argument("--evidence", required=True)
    parser.add_argument("--format", default="plain")
    parser.add_argument("--rank", type=int, default=None)
    parser.add_argument("--rank-proven", action="store_true")
    parser.add_argument("--tags", type=lambda s: [x for x in s.split(",") if x], default=[])
    parser.add_argument("--why", required=True)
    parser.add_argument(
        "--dev-only",
        action="store_true",
        help="refuse a case whose source falls in test: for candidates chosen for what the engine misses (a variant "
        "hunt), which would bias test; decide it before reading them",
    )
    args = parser.parse_args(argv)
    if args.dev_only and split_of(args.source) != "dev":
        print("refused: --dev-only and the source falls in test (not read, not written)", file=sys.stderr)
        return 2
    fields, problems = build(args)
    if problems:
        for problem in problems:
            print(f"refused: {problem}", file=sys.stderr)
        return 2
    folder = write(args.case_id, fields, args.log, args.logs)
    print(f"{folder.relative_to(ROOT)}: {fields['class']}, split {fields['split']}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
