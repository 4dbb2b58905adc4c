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
        suffix = ".out" if source.name.endswith(".log") else ".log"
        target = renamed / Path(source.name).with_suffix(suffix)
        if target.exists():  # slurm.err and slurm.out would both become slurm.log
            target = renamed / (source.name + suffix)
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(source.path, target)
    assert _answer(resolve_sources([str(renamed)])) == expected


@pytest.mark.parametrize("case", SINGLE, ids=[c.id for c in SINGLE])
def test_a_single_file_name_never_sets_its_rank(case: Case, tmp_path: Path) -> None:
    expected = _answer([Source("log.txt", case.log_path)])
    for name in ("016.log", "rank_5.log", "worker-3.out"):
        assert _answer([Source(name, case.log_path)]) == expected, name


AGENT_LOG = """\
+ torchrun --nnodes=2 --nproc_per_node={nproc} --node_rank={node} --master_addr=job-master-0 --master_port=23456 train.py
[W1203 04:12:41.384176606 socket.cpp:752] [c10d] The IPv6 network addresses of (job-master-0, 23456) cannot be \
retrieved (gai error: -2 - Name or service not known).
torch.distributed.DistNetworkError: The client socket has timed out after 900000ms while trying to connect to (job-master-0, 23456).
"""
MASTER_LOG = """\
+ torchrun --nnodes=2 --nproc_per_node={nproc} --node_rank=0 --master_addr=job-master-0 --master_port=23456 train.py
torch.distributed.DistStoreError: Timed out after 901 seconds waiting for clients. 1/2 clients joined.
"""


@pytest.mark.parametrize(("nproc", "worker_rank"), [(4, None), (1, 1)])
def test_a_pod_name_numbers_a_node_when_each_pod_runs_several_ranks(tmp_path: Path, nproc: int, worker_rank: int | None) -> None:
    """Kubeflow's ``-worker-0`` pod is node 1: with four processes per pod its agent's lines are no global rank."""
    (tmp_path / "job-master-0.log").write_text(MASTER_LOG.format(nproc=nproc))
    (tmp_path / "job-worker-0.log").write_text(AGENT_LOG.format(nproc=nproc, node=1))
    diagnosis = diagnose(resolve_sources([str(tmp_path)])).diagnosis
    assert diagnosis.root_cause.id == "rendezvous-failure"
    worker_lines = [e for e in diagnosis.evidence if "client socket" in e.text]
    assert worker_lines
    assert {e.rank for e in worker_lines} == {worker_rank}
    if nproc > 1:
        assert diagnosis.initiating_rank is None
