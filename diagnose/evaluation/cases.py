"""Labeled eval cases: ``evals/cases/<id>/{log.txt | logs/, label.yaml}``."""

from __future__ import annotations

from pathlib import Path

import yaml
from pydantic import BaseModel, ConfigDict, Field

from diagnose.errors import InputError


class Label(BaseModel):
    """What a case's log really shows."""

    model_config = ConfigDict(extra="allow")

    class_: str = Field(alias="class")
    accept: list[str] = Field(default_factory=list)
    initiating_rank: int | None = None
    evidence: list[int | str] = Field(default_factory=list)
    format: str = "plain"
    secrets: list[str] = Field(default_factory=list)
    tags: list[str] = Field(default_factory=list)
    origin: str = "synthetic"


class Case(BaseModel):
    """One case: its id, where its log is, and its label."""

    id: str
    log_path: Path
    label: Label


def load_cases(cases_dir: Path) -> list[Case]:
    """Every case under ``cases_dir``, sorted by id."""
    if not cases_dir.is_dir():
        raise InputError(f"{cases_dir}: no such cases directory")
    cases: list[Case] = []
    for folder in sorted(p for p in cases_dir.iterdir() if (p / "label.yaml").is_file()):
        log_path = folder / "logs" if (folder / "logs").is_dir() else folder / "log.txt"
        data = yaml.safe_load((folder / "label.yaml").read_text(encoding="utf-8")) or {}
        cases.append(Case(id=folder.name, log_path=log_path, label=Label(**data)))
    if not cases:
        raise InputError(f"{cases_dir}: no cases (folders with label.yaml)")
    return cases
