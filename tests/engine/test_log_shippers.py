"""The answer does not depend on how the log was shipped (synthetic and dev cases only: the test split is frozen).

The same output reaches a user raw, with Windows line endings, with a timestamp on every line (GitHub Actions,
``kubectl logs --timestamps``), as a node's CRI container log file (``<time> stderr F <line>``) or behind
``kubectl logs --prefix``. None of these may change the root cause. A shipper's timestamps are added only to logs
with no times of their own (made-up times would contradict the log's), and hard-wrapped cases are left out: a
terminal's wrap happens after the shipper, so a timestamp never starts a wrapped line's piece.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from diagnose.bundled import evals_dir
from diagnose.evaluation.cases import Case, load_split
from diagnose.evaluation.pasted_shapes import SHIPPERS, TIMESTAMPING
from diagnose.parse.ingest import Source
from diagnose.parse.timestamps import parse_timestamp
from diagnose.pipeline import diagnose

CASES = [
    case
    for case in [*load_split(evals_dir(), "synthetic"), *load_split(evals_dir(), "dev")][::10]
    if case.log_path.is_file() and "wrapped-lines" not in case.label.tags
]


@pytest.mark.parametrize("case", CASES, ids=[c.id for c in CASES])
def test_a_shippers_prefix_or_line_ending_keeps_the_root_cause(case: Case, tmp_path: Path) -> None:
    text = case.log_path.read_bytes().decode("utf-8", "replace")
    expected = diagnose([Source("log.txt", case.log_path)]).diagnosis.root_cause.id
    timeless = not any(parse_timestamp(line) for line in text.split("\n"))
    for name, ship in {**SHIPPERS, **(TIMESTAMPING if timeless else {})}.items():
        shipped = tmp_path / f"{name}.txt"
        shipped.write_bytes(ship(text).encode("utf-8"))
        assert diagnose([Source("log.txt", shipped)]).diagnosis.root_cause.id == expected, name
