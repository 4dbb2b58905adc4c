"""A cited line proves a rank only by what it says, never by its file's name (worker-1.log may be node 1)."""

from __future__ import annotations

from pathlib import Path

from diagnose.llm.grounding import line_rank
from diagnose.pipeline import diagnose

OOM = "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB. GPU 1 has a total capacity of 79.15 GiB"


def test_a_rank_from_the_file_name_alone_proves_nothing(tmp_path: Path) -> None:
    logs = tmp_path / "logs"
    logs.mkdir()
    (logs / "worker-0.log").write_text("step 1 loss 2.0\n", encoding="utf-8")
    (logs / "worker-1.log").write_text(f"step 1 loss 2.0\n{OOM}\n[rank5]: {OOM}\n", encoding="utf-8")
    log = diagnose([logs]).log
    source = next(name for name in log.sources if name.endswith("worker-1.log"))
    assert log.rank_hints.get(source) == 1
    assert line_rank(log, (source, 2)) is None
    assert line_rank(log, (source, 3)) == 5
