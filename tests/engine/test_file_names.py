"""The answer does not depend on file names or their order (synthetic and dev cases only: the test split is frozen).

Re-sorting a case's per-rank files, or renaming them in a way that keeps the rank their names give (another
suffix), never changes the root cause or the initiating rank; a single file's name (``016.log``) never sets
its rank.
"""

from __future__ import annotations

import random
import shutil
from pathlib import Path

import pytest

from diagnose.bundled import evals_dir
from diagnose.evaluation.cases import Case, load_split
from diagnose.parse.ingest import Source, resolve_sources
from diagnose.pipeline import diagnose


def _cases() -> list[Case]:
    return [*load_split(evals_dir(), "synthetic"), *load_split(evals_dir(), "dev")]


def _answer(sources: list[Source]) -> tuple[str, int | None]:
    diagnosis = diagnose(sources).diagnosis
    return diagnosis.root_cause.id, diagnosis.initiating_rank


MULTI = [case for case in _cases() if case.log_path.is_dir()]
SINGLE = [case for case in _cases() if case.log_path.is_file()][::6]


@pytest.mark.parametrize("case", MULTI, ids=[c.id for c in MULTI])
def test_reordering_or_renaming_per_rank_files_keeps_the_answer(case: Case, tmp_path: Path) -> None:
    sources = resolve_sources([str(case.log_path)])
    expected = _answer(sources)
    shuffled = list(sources)
    random.Random(case.id).shuffle(shuffled)
    assert _answer(shuffled[::-1]) == expected
    assert _answer(shuffled) == expected
    renamed = tmp_path / "logs"
    for source in sources:
        assert source.path is not None
        target = renamed / Path(source.name).with_suffix(".out" if source.name.endswith(".log") else ".log")
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(source.path, target)
    assert _answer(resolve_sources([str(renamed)])) == expected


@pytest.mark.parametrize("case", SINGLE, ids=[c.id for c in SINGLE])
def test_a_single_file_name_never_sets_its_rank(case: Case, tmp_path: Path) -> None:
    expected = _answer([Source("log.txt", case.log_path)])
    for name in ("016.log", "rank_5.log", "worker-3.out"):
        assert _answer([Source(name, case.log_path)]) == expected, name
