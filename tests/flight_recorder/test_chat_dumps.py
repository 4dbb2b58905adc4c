"""The chat answers from the dumps: which collective a rank was stuck in, what every rank completed last, cited."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from diagnose.chat.conversation import ask
from diagnose.chat.session import ChatSession
from diagnose.pipeline import diagnose
from tests.conftest import EXAMPLES

from .test_pipeline import hang


def session_for(path: Path) -> ChatSession:
    """A chat about the diagnosis of ``path``, carrying what its dumps say (as the CLI and the web app build it)."""
    result = diagnose([path])
    return ChatSession(
        diagnosis=result.diagnosis, log=result.log, redactor_state=result.redactor_state, flight_recorder=result.flight_recorder
    )


def test_which_collective_a_waiting_rank_was_stuck_in(generator: Any, tmp_path: Path) -> None:
    session = session_for(hang(generator, tmp_path / "run", 4, (3,)))
    answer = ask(session, "Which collective was rank 1 stuck in?")
    assert answer.answer.startswith("Rank 1 was stuck in all_reduce #12 (collective) in process group default_pg")
    assert "waits for rank(s) 3" in answer.answer
    assert [(c.kind, c.file, c.rank, c.record_id) for c in answer.citations] == [("dump", "_dump_1", 1, 101)]


def test_the_rank_that_never_entered_is_explained_with_its_dump(generator: Any, tmp_path: Path) -> None:
    session = session_for(hang(generator, tmp_path / "run", 4, (3,)))
    answer = ask(session, "which collective was rank 3 stuck in?")
    assert "no unfinished op" in answer.answer and "the others wait for (never entered)" in answer.answer
    assert answer.citations and all(c.kind == "dump" and c.file == "_dump_3" for c in answer.citations)


def test_what_every_rank_completed_last(generator: Any, tmp_path: Path) -> None:
    session = session_for(hang(generator, tmp_path / "run", 4, (3,)))
    answer = ask(session, "What was the last thing every rank completed?")
    assert "- default_pg: #11 on ranks 0-3" in answer.answer
    assert answer.citations and answer.citations[0].kind == "dump"


def test_the_shared_runs_answer_both_questions(fr_shared: Path) -> None:
    session = session_for(fr_shared / "gpu_error_2nd")
    stuck = ask(session, "which collective was rank 9 stuck in?")
    assert stuck.answer.startswith("Rank 9 was stuck in ") and "ranks 8, 10-13, 15 wait for it at all_to_all" in stuck.answer
    assert all(c.kind == "dump" and c.file == "_dump_9" and c.record_id is not None for c in stuck.citations)
    last = ask(session, "what was the last thing every rank completed?")
    assert "Behind the others: rank 9 (in 7 groups), rank 14 (in 7 groups)" in last.answer
    assert {c.kind for c in last.citations} == {"dump"}


def test_without_dumps_the_log_lines_of_the_rank_answer(tmp_path: Path) -> None:
    result = diagnose([EXAMPLES / "multi-rank-oom.log"])
    session = ChatSession(diagnosis=result.diagnosis, log=result.log)
    answer = ask(session, "which collective was rank 2 stuck in?")
    assert answer.answer.startswith("No Flight Recorder dumps came with this log") and "OpType=ALLREDUCE" in answer.answer
    assert answer.citations and answer.citations[0].kind == "log"
    nothing = ask(session, "what was the last thing every rank completed?")
    assert not nothing.grounded and "TORCH_NCCL_DUMP_ON_TIMEOUT=1" in nothing.answer


def test_the_chat_facts_stay_bounded_and_keep_the_groups_where_ranks_disagree(generator: Any, tmp_path: Path) -> None:
    from diagnose.engine.fr_facts import FACT_REFS, facts
    from diagnose.parse.flight_recorder import load_dumps
    from redaction import Redactor

    world, stalled = 600, 7
    groups = {str(g): (f"group_{g}", list(range(world))) for g in range(4)}
    for rank in range(world):
        entries = [] if rank == stalled else [generator.entry(100 + rank, ("3", "group_3"), 12, "all_reduce", t=rank)]
        status = {str(g): (5, 5) for g in range(3)} | {"3": (11 if rank == stalled else 12, 11 if rank == stalled else 10)}
        (tmp_path / f"_dump_{rank}").write_bytes(generator.encode(generator.dump(groups, status, entries), "json"))
    recorded = facts(load_dumps(tmp_path, Redactor()))
    refs = [ref for rs in recorded.last_completed.by_rank.values() for ref in rs]
    assert len(refs) <= FACT_REFS and "left out" in recorded.last_completed.searched
    assert {ref.pg_desc for ref in refs} >= {"group_3"}, "the group where the ranks disagree is kept"
    assert recorded.verdict.initiating_ranks == [stalled]
