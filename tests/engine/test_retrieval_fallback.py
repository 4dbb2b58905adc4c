"""The retrieval fallback's lookup: what it looks up and what it may propose (a real embedded index of the kb)."""

from __future__ import annotations

from pathlib import Path
from typing import cast

import pytest

from diagnose.encyclopedia.entries import load_entries
from diagnose.encyclopedia.index import KBIndex, open_index
from diagnose.encyclopedia.index_models import ExampleHit
from diagnose.engine import lookup_lines as lookup_lines_module
from diagnose.engine.fallbacks import nearest
from diagnose.engine.lookup_lines import error_lines, lookup_lines
from diagnose.engine.memory import FRAGMENTATION, OOM
from diagnose.parse.ingest import resolve_sources
from diagnose.parse.parsed_log import ParsedLog
from diagnose.pipeline import diagnose
from diagnose.settings import load_settings

pytest.importorskip("chromadb")

OOM_LINE = (
    "[rank3]: torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB. GPU 3 has 1.10 GiB free. Of the allocated "
    "memory 70.02 GiB is allocated by PyTorch, and 6.91 GiB is reserved by PyTorch but unallocated."
)
"""An OOM line without the card's capacity: the fragmentation signature cannot read it (no share of the card)."""


@pytest.fixture(scope="module")
def index() -> KBIndex:
    built = open_index(load_settings())
    built.ensure()
    return built


def _log(tmp_path: Path, text: str) -> ParsedLog:
    path = tmp_path / "train.log"
    path.write_text(text, encoding="utf-8")
    return diagnose(resolve_sources([str(path)])).log


def test_a_special_case_decided_by_numbers_is_proposed_as_its_general_case(tmp_path: Path, index: KBIndex) -> None:
    # as if cuda-oom's signatures did not exist: the nearest example is a fragmentation one (its wording is the
    # closest), but a line no signature read gives no numbers to tell fragmentation from a full card
    log = _log(tmp_path, f"step 10 loss 2.31\n{OOM_LINE}\n")
    entries = {e.id: e for e in load_entries(load_settings().kb_dir)}
    found = nearest(log, index, without=[s.pattern for s in entries[OOM].signatures])
    assert found is not None
    assert found.line.text == OOM_LINE
    assert found.hit.example in [x for s in entries[FRAGMENTATION].signatures for x in s.examples]
    assert found.hit.entry_id == OOM


def test_a_traceback_cut_before_its_exception_is_not_looked_up(tmp_path: Path, index: KBIndex) -> None:
    text = "epoch 1\nTraceback (most recent call last):\nstderr: Traceback (most recent call last):\n"
    assert nearest(_log(tmp_path, text), index) is None
    # cut inside its frames: the last line is a frame's code, not a message
    cut = 'epoch 1\nTraceback (most recent call last):\n  File "train.py", line 3, in <module>\n    raise RuntimeError(\n'
    assert nearest(_log(tmp_path, cut), index) is None
    # the same traceback with its exception line is looked up, by that line
    found = nearest(_log(tmp_path, text + '  File "train.py", line 3, in <module>\nValueError: bad value in batch 7\n'), index)
    assert found is not None and found.line.text == "ValueError: bad value in batch 7"


def test_a_line_nearer_to_pythons_own_message_than_to_any_root_cause_is_not_proposed(tmp_path: Path, index: KBIndex) -> None:
    # the skeleton "'NoneType' object has no attribute" is shared with a bitsandbytes example of import-abi-error; a
    # user's own attribute error is nearer to CPython's message (program-error's retrieval lines), so its margin is negative
    own = "AttributeError: 'NoneType' object has no attribute 'shape'\n"
    found = nearest(_log(tmp_path, own), index)
    assert found is not None and found.hit.entry_id == "import-abi-error"
    assert found.margin < 0


def test_a_log_without_an_error_line_looks_up_the_lines_that_say_something_failed(tmp_path: Path) -> None:
    text = (
        "NCCL_DEBUG=WARN\n"
        "node1:12:40 [0] NCCL INFO NET/Plugin: Failed to find ncclNetPlugin_v6 symbol.\n"
        "train.py:9: UserWarning: fused kernel failed to build, falling back\n"
        "  warnings.warn(\n"
        " iteration 10/100 | lm loss: 2.31 | number of skipped iterations: 0 | number of nan iterations: 0 |\n"
        "Killed\n"
        "Killed\n"
    )
    log = _log(tmp_path, text)
    assert error_lines(log) == []
    # settings, NCCL's INFO lines, Python's own warnings and a value's name say nothing failed; a repeat counts once
    assert [line.text for line in lookup_lines(log)] == ["Killed"]
    assert [line.line for line in lookup_lines(log)] == [7]  # the last time it was printed


def test_a_log_with_an_error_line_looks_up_only_its_error_lines(tmp_path: Path) -> None:
    log = _log(tmp_path, "node1:12:40 [0] NCCL WARN Call to ibv_reg_mr failed\nValueError: bad value in batch 7\n")
    assert [line.text for line in lookup_lines(log)] == ["ValueError: bad value in batch 7"]


def test_an_unknown_warning_finds_its_entry_when_no_error_line_exists(tmp_path: Path, index: KBIndex) -> None:
    # as if the signature that knows this c10d warning did not exist: the line has no exception shape, yet it is looked up
    line = (
        "[W socket.cpp:663] [c10d] The client socket has failed to connect to [::ffff:255.255.0.0]:29500 "
        "(errno: 110 - Connection timed out)."
    )
    entries = {e.id: e for e in load_entries(load_settings().kb_dir)}
    held_out = [s.pattern for s in entries["rendezvous-failure"].signatures if line in s.examples]
    log = _log(tmp_path, f"step 10 loss 2.31\n{line}\n")
    assert held_out and error_lines(log) == []
    found = nearest(log, index, without=held_out)
    assert found is not None
    assert found.line.text == line
    assert found.hit.entry_id == "rendezvous-failure"


class _FixedHits:
    """An index whose nearest examples are given: one entry with a single near example, one with several."""

    def nearest_examples(self, lines: list[str], *, without: object = (), k: int = 1) -> list[list[ExampleHit]]:
        hits = [
            ExampleHit(entry_id="lone", example="one lucky example", score=0.62, signature="a"),
            ExampleHit(entry_id="agreed", example="wording 1", score=0.60, signature="b"),
            ExampleHit(entry_id="agreed", example="wording 2", score=0.55, signature="c"),
            ExampleHit(entry_id="agreed", example="wording 3", score=0.52, signature="d"),
        ]
        return [hits for _ in lines]


def test_an_entry_whose_several_examples_come_near_beats_one_lucky_example(tmp_path: Path) -> None:
    log = _log(tmp_path, "ValueError: something no signature knows\n")
    found = nearest(log, cast("KBIndex", _FixedHits()))
    assert found is not None
    assert found.hit.entry_id == "agreed" and found.hit.example == "wording 1"
    # 0.60 + 0.5 * (0.55 + 0.52 + 0) / 3 against 0.62 alone
    assert found.margin == pytest.approx(0.60 + 0.5 * (0.55 + 0.52) / 3 - 0.62, abs=1e-4)


def test_failure_lines_are_searched_only_near_the_end_of_a_long_log(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(lookup_lines_module, "TAIL_LINES", 3)
    log = _log(tmp_path, "connection to the store was lost\nstep 1\nstep 2\nstep 3\nthe data server refused the request\n")
    assert [line.text for line in lookup_lines(log)] == ["the data server refused the request"]


def test_the_known_patterns_may_be_any_iterable(tmp_path: Path) -> None:
    # a log with no error line: the known patterns are read once for the error lines and again for the failure lines
    log = _log(tmp_path, "[rank0]: failed (exitcode: 1) local_rank: 0 (pid: 7) of binary: python\nthe data server refused the request\n")
    known = {f.signature for f in log.findings}
    assert [line.text for line in lookup_lines(log, iter(known))] == [line.text for line in lookup_lines(log, known)]
    assert "the data server refused the request" in [line.text for line in lookup_lines(log, iter(known))]
