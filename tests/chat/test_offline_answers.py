"""Offline answers use the log: the rank and host, quoted lines with numbers, whole sentences, reasons for alternatives."""

from __future__ import annotations

import re

import pytest

from diagnose.chat.conversation import ask
from diagnose.chat.facts import sentences
from diagnose.chat.session import Answer, ChatSession
from diagnose.evaluation.chat_eval import masked_host
from tests.chat.helpers import case_log, open_session

# r2003: a real log, rank 12's GPU hit an uncorrectable ECC error (issue 17's example); c2093: rank 13's NVLink
# error on the second node of two (label: node dgx-h100-b07, per-node stderr files), the first node only times out.


@pytest.fixture(scope="module")
def ecc() -> ChatSession:
    return open_session(case_log("r2003"))


@pytest.fixture(scope="module")
def nvlink() -> ChatSession:
    return open_session(case_log("c2093"))


def _cites_existing_lines(answer: Answer, session: ChatSession) -> bool:
    logs = [c for c in answer.citations if c.kind == "log"]
    return bool(logs) and all(session.log.line_text(c.file or "", c.line or 0) == c.text for c in logs)


def test_why_rank_quotes_the_failing_line_with_its_number(ecc: ChatSession) -> None:
    answer = ask(ecc, "Why did rank 12 fail first?")
    assert answer.answer.startswith("Rank 12 is where the failure started: at log.txt:1")
    assert "log.txt:1" in answer.answer and "uncorrectable ECC error encountered" in answer.answer
    assert _cites_existing_lines(answer, ecc)


def test_hardware_or_code_gives_a_verdict_and_whole_sentences(ecc: ChatSession) -> None:
    answer = ask(ecc, "Is this hardware or my code?")
    assert answer.answer.startswith("Verdict: hardware")
    assert "uncorrectable ECC error" in answer.answer
    for line in answer.answer.splitlines():
        assert not line.rstrip().endswith(":") or line.startswith("The lines that show it"), line  # no excerpt cut before its list
    kb = [c for c in answer.citations if c.kind == "kb"]
    assert kb and all(c.text.rstrip()[-1] in ".!?)`" for c in kb)


def test_what_else_names_each_alternative_with_evidence_for_and_against(nvlink: ChatSession) -> None:
    answer = ask(nvlink, "What else could it be?")
    blocks = re.findall(r"^- ([a-z0-9-]+).*\n  For: (.+)(?:\n  Against: (.+)|\. Against: (.+))?", answer.answer, re.M)
    ids = [b[0] for b in blocks]
    assert {"cuda-illegal-memory-access", "nccl-timeout-hang"} <= set(ids)
    assert answer.answer.count("Against:") == len(ids)
    timeout = answer.answer.split("- nccl-timeout-hang", 1)[1].split("\n- ", 1)[0]
    assert "line(s) match it" in timeout and "cascade" in timeout  # seen here, and why it is not the cause


def test_which_node_to_drain_names_the_initiating_host(nvlink: ChatSession) -> None:
    host = nvlink.diagnosis.evidence[0].file.split("/")[0]  # the masked name of rank 13's node folder (node02)
    assert host.startswith("<HOST_")
    answer = ask(nvlink, "Which node should I drain?")
    assert answer.answer.startswith(f"Drain {host}: it ran rank 13")
    assert "stderr.log:49" in answer.answer
    assert any(c.kind == "kb" and c.section == "Fix" for c in answer.citations)


def test_drain_is_not_indicated_for_a_code_failure() -> None:
    session = open_session(case_log("c1765"))  # rank 5's device mismatch (cuda:5 vs cuda:0), a code bug
    answer = ask(session, "Which node should I drain?")
    host = masked_host("gpu-dgx-a7", session.redactor_state)  # the label's host, as the log's masking shows it
    assert f"Rank 5 ran on {host}" in answer.answer and "not indicated" in answer.answer


def test_host_unknown_says_what_would_answer_it(ecc: ChatSession) -> None:
    answer = ask(ecc, "Which node should I drain?")
    assert "does not name its host" in answer.answer and "What would answer it" in answer.answer


def test_setting_questions_get_a_verdict_for_this_cause(nvlink: ChatSession) -> None:
    p2p = ask(nvlink, "Would NCCL_P2P_DISABLE=1 help?")
    assert p2p.answer.startswith("Probably not") and "does not show NCCL_P2P_DISABLE set" in p2p.answer
    timeout = ask(nvlink, "Would a longer NCCL timeout help?")
    assert timeout.answer.startswith("Probably not") and "Rank 13 did not just run slow" in timeout.answer
    oom = open_session(case_log("r2002"))  # rank 3 out of GPU memory
    assert ask(oom, "Would a smaller batch size help?").answer.startswith("Yes, likely")


def test_lines_around_a_named_error(nvlink: ChatSession) -> None:
    answer = ask(nvlink, "show me the lines around the NVLink error")
    lines = {c.line for c in answer.citations}
    assert 49 in lines and {44, 54} <= lines
    assert re.search(r"^\*\s+49  \[rank13\]: RuntimeError", answer.answer, re.M)


def test_out_of_scope_question_is_an_honest_unknown(ecc: ChatSession) -> None:
    for question in ("How much does an H100 cost per hour?", "Which GPU model do the nodes have?", "How big is the dataset on disk?"):
        answer = ask(ecc, question)
        assert "The log does not say" in answer.answer and "What would answer it" in answer.answer, answer.answer
        assert not answer.grounded


def test_unrecognised_question_quotes_the_lines_that_mention_it(nvlink: ChatSession) -> None:
    answer = ask(nvlink, "tell me about REDUCE_SCATTER")
    assert answer.answer.startswith("Lines in the log that mention it")
    assert _cites_existing_lines(answer, nvlink)
    assert all("REDUCE_SCATTER" in c.text for c in answer.citations)


def test_resume_after_hardware_fault_says_where(nvlink: ChatSession) -> None:
    answer = ask(nvlink, "Should I resume from the last checkpoint?")
    assert answer.answer.startswith(f"Yes: resume from the last checkpoint away from {nvlink.diagnosis.initiating_host}")


@pytest.mark.parametrize(
    ("markdown", "expected"),
    [
        ("One. Two (e.g. `x`). Three.", ["One.", "Two (e.g. `x`).", "Three."]),
        ("- **Bold**: item one\n  continued. Second sentence.\n- Item two", ["Bold: item one continued.", "Second sentence.", "Item two."]),
        ("See [entry](entry.md) — why.\n\n| a | b |\n|---|---|\n\n```bash\ncmd\n```", ["See entry — why."]),
        ("Call `f(x). Then` more.", ["Call `f(x). Then` more."]),
    ],
)
def test_sentences_are_whole(markdown: str, expected: list[str]) -> None:
    assert sentences(markdown) == expected


def test_a_person_stop_is_neither_hardware_nor_code_and_needs_no_drain() -> None:
    session = open_session(case_log("r1801"))  # the agent got SIGHUP (a closed terminal) and stopped its 4 workers
    assert session.diagnosis.root_cause.id == "user-interrupt"
    verdict = ask(session, "Is this hardware or my code?")
    assert verdict.answer.startswith("Verdict: neither: a person")
    assert "No node needs draining" in ask(session, "Which node should I drain?").answer
    resume = ask(session, "Can I resume from the checkpoint?")
    assert resume.answer.startswith("Yes: resume from the last checkpoint; nothing failed")
    assert _cites_existing_lines(resume, session)
