"""Labeled eval cases and their splits.

``evals/cases/<id>/`` are the ``synthetic`` split; ``evals/real/<id>/`` are logs copied from public reports,
each labeled ``split: dev`` (to improve the engine on) or ``split: test`` (frozen: only its aggregate is read).
Each case is ``{log.txt | logs/, label.yaml}``.
"""

from __future__ import annotations

from pathlib import Path
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from diagnose.errors import InputError
from diagnose.yaml_text import load_yaml

SplitName = Literal["synthetic", "dev", "test"]
SPLITS: tuple[SplitName, ...] = ("synthetic", "dev", "test")
SPLIT_DIRS: dict[str, str] = {"synthetic": "cases", "dev": "real", "test": "real"}
"""Where each split's cases live under ``evals/``."""


class Label(BaseModel):
    """What a case's log really shows."""

    model_config = ConfigDict(extra="allow")

    class_: str = Field(alias="class")
    accept: list[str] = Field(default_factory=list)
    initiating_rank: int | None = None
    rank_proven: bool | None = Field(default=None, description="the log itself proves the initiating rank (real cases)")
    evidence: list[int | str] = Field(default_factory=list)
    format: str = "plain"
    secrets: list[str] = Field(default_factory=list)
    tags: list[str] = Field(default_factory=list)
    origin: str = "synthetic"
    split: SplitName | None = Field(default=None, description="dev | test for real cases; synthetic when absent")
    source: str | None = Field(default=None, description="the public report the log was copied from")
    why: str | None = Field(default=None, description="why the label is what it is")

    @property
    def split_name(self) -> SplitName:
        """The case's split: its label's, else synthetic."""
        return self.split or "synthetic"

    @property
    def proven_rank(self) -> int | None:
        """The initiating rank when the log proves it (a synthetic case's labeled rank counts as proven)."""
        if self.initiating_rank is None:
            return None
        if self.split_name == "synthetic":
            return self.initiating_rank if self.rank_proven is not False else None
        return self.initiating_rank if self.rank_proven else None


class Case(BaseModel):
    """One case: its id, where its log is, and its label."""

    id: str
    log_path: Path
    label: Label

    @property
    def split(self) -> SplitName:
        """The case's split."""
        return self.label.split_name


def load_cases(cases_dir: Path) -> list[Case]:
    """Every case under ``cases_dir``, sorted by id."""
    if not cases_dir.is_dir():
        raise InputError(f"{cases_dir}: no such cases directory")
    cases: list[Case] = []
    for folder in sorted(p for p in cases_dir.iterdir() if (p / "label.yaml").is_file()):
        log_path = folder / "logs" if (folder / "logs").is_dir() else folder / "log.txt"
        data = load_yaml((folder / "label.yaml").read_text(encoding="utf-8")) or {}
        cases.append(Case(id=folder.name, log_path=log_path, label=Label(**data)))
    if not cases:
        raise InputError(f"{cases_dir}: no cases (folders with label.yaml)")
    return cases


def load_split(evals: Path, split: str) -> list[Case]:
    """The cases of one split (``synthetic``, ``dev``, ``test``) or of ``all``, from the ``evals/`` folder."""
    if split != "all" and split not in SPLITS:
        raise InputError(f"unknown split {split!r}: use one of {', '.join(SPLITS)}, all")
    wanted = SPLITS if split == "all" else (split,)
    cases: list[Case] = []
    for folder in dict.fromkeys(SPLIT_DIRS[name] for name in wanted):
        if (evals / folder).is_dir():
            cases += [case for case in load_cases(evals / folder) if case.split in wanted]
    if not cases:
        raise InputError(f"{evals}: no cases in split {split!r}")
    return cases
