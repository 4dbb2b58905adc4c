"""Follow-up chat: a scripted ``diagnose chat`` session offline, and the model path with checked citations."""

from __future__ import annotations

import subprocess
import sys

from diagnose.chat.conversation import ask
from diagnose.chat.session import ChatSession
from diagnose.llm.client import LiteLLMClient
from diagnose.parse.ingest import resolve_sources
from diagnose.pipeline import chat_responder, diagnose
from diagnose.settings import load_settings
from tests.conftest import EXAMPLES
from tests.fake_openai import FakeOpenAI

OOM = EXAMPLES / "multi-rank-oom.log"
QUESTIONS = [
    "why rank 5?",
    "is it hardware or my code?",
    "how do I fix it?",
    "how do I verify the fix?",
    "what else could it be?",
    "show the evidence",
    "show the lines around line 203",
    "what happened on rank 2",
    "what should I log next time?",
]


def _session() -> ChatSession:
    result = diagnose(resolve_sources([str(OOM)]), settings=load_settings())
    return ChatSession(diagnosis=result.diagnosis, log=result.log)


def test_scripted_terminal_session_answers_every_follow_up_with_sources() -> None:
    script = "\n".join([*QUESTIONS, "/evidence", "/fix", "/verify", "/quit"]) + "\n"
    done = subprocess.run(
        [sys.executable, "-m", "diagnose", "chat", str(OOM), "--no-retrieval"], input=script, capture_output=True, text=True, timeout=300
    )
    assert done.returncode == 0, done.stderr
    out = done.stdout
    assert "Root cause" in out
    answers = out.split("\n> ")[1:]
    assert len(answers) == len(QUESTIONS) + 3
    for block in answers:
        assert "\nsources: " in block, block
        assert "sources: none" not in block, block


def test_offline_answers_cite_what_they_say() -> None:
    session = _session()
    why = ask(session, "why rank 5 and not rank 0?")
    assert "Rank 5" in why.answer and "Rank 0" in why.answer
    assert any(c.kind == "log" and c.rank == 5 for c in why.citations)
    fix = ask(session, "how do I fix it?")
    assert {c.entry_id for c in fix.citations if c.kind == "kb"} == {"cuda-oom"}
    assert all(session.log.line_text(c.file or "", c.line or 0) == c.text for c in fix.citations if c.kind == "log")
    around = ask(session, "show the lines around line 203")
    assert {c.line for c in around.citations} >= {200, 203, 206}
    rank = ask(session, "what happened on rank 2")
    assert rank.citations and all(c.rank == 2 for c in rank.citations)
    assert len(session.history) == 8


def test_unrecognised_question_quotes_the_log_or_says_the_log_does_not_say() -> None:
    session = _session()
    answer = ask(session, "tell me about watchdog timeouts in allreduce")
    assert answer.grounded and answer.answer.startswith("Lines in the log that mention it")
    assert all("ALLREDUCE" in c.text.upper() for c in answer.citations if c.kind == "log")
    unrelated = ask(session, "how does gradient accumulation interact with mixed precision training?")
    assert not unrelated.grounded
    assert "The log does not say" in unrelated.answer and "What would answer it" in unrelated.answer
    assert "closest material" in unrelated.answer and unrelated.citations


def test_session_holds_no_secret() -> None:
    dumped = _session().model_dump_json()
    for secret in ("hf_QbXkTnWmLpRsVaYcZdEfGhJkMnPq1234", "gpu-node-017.cluster.internal", "/home/alice"):
        assert secret not in dumped


def test_model_answer_streams_and_bad_citations_are_removed() -> None:
    session = _session()
    with FakeOpenAI() as fake:
        fake.replies.append("Rank 5 failed first [multi-rank-oom.log:203], see [kb:cuda-oom#Fix]; also [multi-rank-oom.log:99999].")
        client = LiteLLMClient(load_settings(model="openai/fake-chat", api_base=fake.api_base))
        answer = ask(session, "why rank 5?", responder=chat_responder(client))
        sent = fake.sent_text()
    assert "multi-rank-oom.log:99999" in answer.answer and "removed citations" in answer.answer
    refs = {(c.kind, c.line, c.entry_id) for c in answer.citations}
    assert ("log", 203, None) in refs and ("kb", None, "cuda-oom") in refs
    assert "hf_QbXkTnWmLpRsVaYcZdEfGhJkMnPq1234" not in sent and "<log>" in sent


def test_unreachable_model_falls_back_to_offline_answer() -> None:
    session = _session()
    with FakeOpenAI() as fake:
        fake.replies.extend([500, 500, 500])
        client = LiteLLMClient(load_settings(model="openai/fake-down", api_base=fake.api_base))
        answer = ask(session, "how do I fix it?", responder=chat_responder(client))
    assert "model unavailable" in answer.answer
    assert answer.citations


def test_chat_with_log_on_stdin_and_no_terminal_is_a_clear_error() -> None:
    done = subprocess.run(
        [sys.executable, "-m", "diagnose", "chat", "-", "--no-retrieval"],
        input=OOM.read_text(),
        capture_output=True,
        text=True,
        timeout=300,
        start_new_session=True,
    )
    assert done.returncode == 2
    assert "pass the log as a file" in done.stderr and "Traceback" not in done.stderr


def test_question_is_masked_before_the_history_and_the_model_see_it() -> None:
    session = _session()
    with FakeOpenAI() as fake:
        fake.replies.append("It is rank 5 [multi-rank-oom.log:203].")
        client = LiteLLMClient(load_settings(model="openai/fake-q", api_base=fake.api_base))
        question = "why did it fail on gpu-node-018.cluster.internal with HF_TOKEN=hf_ZxCvBnMaSdFgHjKlQwErTyUiOp1234?"
        ask(session, question, responder=chat_responder(client))
        sent = fake.sent_text()
    for secret in ("gpu-node-018.cluster.internal", "hf_ZxCvBnMaSdFgHjKlQwErTyUiOp1234"):
        assert secret not in sent
        assert secret not in session.model_dump_json()
    assert "<HOST_" in session.history[-2].content
