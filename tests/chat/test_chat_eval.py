"""The chat eval: question files, scoring (facts, forbidden facts, citations, honest unknowns, leaks), the CLI table."""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import yaml

from diagnose.chat.session import Answer, Citation
from diagnose.errors import InputError
from diagnose.evaluation.chat_eval import find_case, load_questions, run_chat_eval, select_chat_cases
from diagnose.evaluation.chat_score import ChatQuestion, score_answer
from diagnose.llm.client import LiteLLMClient
from diagnose.settings import load_settings
from tests.chat.helpers import case_log, open_session
from tests.conftest import REPO
from tests.fake_openai import FakeOpenAI

EVALS = REPO / "evals"


def test_bundled_question_files_cover_enough_cases_and_types() -> None:
    files = load_questions(EVALS / "chat")
    questions = [q for _, qs in files for q in qs]
    assert len(files) >= 30 and len(questions) >= 150
    assert {q.type for q in questions} >= {
        "rank",
        "node",
        "hardware-or-code",
        "setting",
        "after-hours",
        "confirm",
        "resume",
        "alternatives",
        "lines-around",
        "out-of-scope",
    }
    for case_id, _ in files:
        find_case(EVALS, case_id)  # every file names a case; real cases are dev-split only
    assert all(q.honest_unknown for q in questions if q.type == "out-of-scope")


def test_a_test_split_case_is_refused(tmp_path: Path) -> None:
    real = EVALS / "real"
    test_case = next((p.name for p in sorted(real.iterdir()) if "split: test" in (p / "label.yaml").read_text()), None)
    if test_case is None:
        pytest.skip("no test-split real case in this checkout")
    with pytest.raises(InputError, match="dev split only"):
        find_case(EVALS, test_case)


def test_scoring_checks_facts_citations_and_honesty() -> None:
    session = open_session(case_log("r2003"))
    question = ChatQuestion(
        q="why rank 12?",
        type="rank",
        must=[r"(?i)\brank 12\b", r"ECC"],
        must_not=[r"rank 3 failed"],
        cite=["log:1", "kb:gpu-hardware-fault#Fix"],
    )
    line = session.log.line_text("log.txt", 1) or ""
    good = Answer(
        answer="Rank 12 failed first: ECC (log.txt:1).",
        citations=[
            Citation(kind="log", file="log.txt", line=1, text=line),
            Citation(kind="kb", entry_id="gpu-hardware-fault", section="Fix"),
        ],
    )
    scored = score_answer("r2003", question, good, session.log)
    assert scored.must_missed == [] and scored.cite_missed == [] and scored.invalid_citations == []
    bad = Answer(
        answer="rank 3 failed first, see log.txt:999",
        citations=[Citation(kind="log", file="log.txt", line=999, text="invented"), Citation(kind="kb", entry_id="no-such-entry")],
    )
    scored = score_answer("r2003", question, bad, session.log)
    assert scored.must_missed == question.must and scored.forbidden_found == ["rank 3 failed"]
    assert set(scored.invalid_citations) == {"log.txt:999", "kb:no-such-entry"}  # the cited line and the one in the text
    unknown = ChatQuestion(q="cost?", type="out-of-scope", honest_unknown=True)
    honest = Answer(answer="The log does not say that. What would answer it: your provider.")
    assert score_answer("r2003", unknown, honest, session.log).honest_unknown is True
    assert score_answer("r2003", unknown, Answer(answer="About $2."), session.log).honest_unknown is False


def _one_case(tmp_path: Path) -> tuple[Path, str]:
    evals = tmp_path / "evals"
    shutil.copytree(EVALS / "cases" / "c2084", evals / "cases" / "c2084")
    (evals / "chat").mkdir()
    raw = "gnn-pretrain-7f3c-worker-1"  # a planted secret of c2084 (the host of rank 5)
    assert raw in yaml.safe_load((evals / "cases" / "c2084" / "label.yaml").read_text())["secrets"]
    (evals / "chat" / "c2084.yaml").write_text(
        yaml.safe_dump(
            [
                {"q": f"Did {raw} fail?", "type": "node", "must": [f"{{host:{raw}}}"]},
                {"q": "show me the lines around line 10 of worker-1.log", "type": "lines-around", "must": ["idx_dim"], "cite": ["log:10"]},
            ]
        )
    )
    return evals, raw


def test_a_question_quoting_a_secret_is_answered_with_the_placeholder(tmp_path: Path) -> None:
    evals, _ = _one_case(tmp_path)
    summary = run_chat_eval(evals, load_settings(retrieval=False))
    assert summary["leaks"] == 0 and summary["fact_recall"] == 1.0 and summary["citations_valid"] == 1.0


def test_per_model_a_secret_in_an_answer_is_counted_as_a_leak(tmp_path: Path) -> None:
    evals, raw = _one_case(tmp_path)
    chat_replies = [f"{raw} failed on rank 5 [worker-1.log:10].", "Here [worker-1.log:10] and [worker-1.log:9999]."]

    def reply(request: dict[str, Any]) -> str:
        return chat_replies.pop(0) if request.get("stream") else "{}"  # "{}": the diagnosis step, rejected (rules stand)

    with FakeOpenAI() as fake:
        fake.default_reply = reply
        client = LiteLLMClient(load_settings(model="openai/fake-eval", api_base=fake.api_base))
        summary = run_chat_eval(evals, load_settings(retrieval=False, model="openai/fake-eval"), llm=client)
        sent = fake.sent_text()
    assert summary["backend"] == "openai/fake-eval"
    assert f"c2084: {raw}" in summary["leaked"]  # type: ignore[operator]  # the model text is checked like the offline answer
    assert f"Did {raw}" not in sent and re.search(r"Did <HOST_\d+> fail\?", sent)  # the question went to the model masked
    lines = next(r for r in summary["results"] if r["type"] == "lines-around")  # type: ignore[index]
    assert lines["invalid_citations"] == ["worker-1.log:9999"] and summary["citations_valid"] < 1.0  # type: ignore[operator]


def test_cli_chat_eval_meets_the_acceptance_figures() -> None:
    done = subprocess.run(
        [sys.executable, "-m", "diagnose", "eval", "--chat", "--no-retrieval", "--json"], capture_output=True, text=True, timeout=600
    )
    assert done.returncode == 0, done.stderr
    summary = json.loads(done.stdout)
    assert summary["questions"] >= 150 and summary["cases"] >= 30
    assert summary["fact_recall"] >= 0.85
    assert summary["forbidden_right_diagnosis"] == 0  # forbidden facts come only from cases the diagnosis gets wrong
    assert summary["citations_valid"] == 1.0 and summary["honest_unknown"] == 1.0 and summary["leaks"] == 0
    table = subprocess.run(
        [sys.executable, "-m", "diagnose", "eval", "--chat", "--no-retrieval"], capture_output=True, text=True, timeout=600
    ).stdout
    assert "| all | " in table and "| out-of-scope | " in table


# --split and --cases choose which question files the chat eval asks


def _ids(chosen: list[tuple[Any, list[ChatQuestion]]]) -> list[str]:
    return [case.id for case, _ in chosen]


def test_split_picks_the_question_files_of_that_splits_cases() -> None:
    every = _ids(select_chat_cases(EVALS))
    synthetic = select_chat_cases(EVALS, split="synthetic")
    dev = select_chat_cases(EVALS, split="dev")
    assert all(case.split == "synthetic" and (EVALS / "cases" / case.id).is_dir() for case, _ in synthetic)
    assert all(case.split == "dev" and (EVALS / "real" / case.id).is_dir() for case, _ in dev)
    assert synthetic and dev and sorted(_ids(synthetic) + _ids(dev)) == sorted(every)
    assert {path.stem for path in (EVALS / "chat").glob("*.yaml")} == set(every)


@pytest.mark.parametrize("split", ["test", "bogus"])
def test_split_test_or_unknown_is_refused(split: str) -> None:
    with pytest.raises(InputError, match="dev split only" if split == "test" else "unknown split"):
        select_chat_cases(EVALS, split=split)


def test_cases_folder_of_question_files_asks_only_those(tmp_path: Path) -> None:
    for case_id in ("c2084", "r2003"):
        shutil.copy(EVALS / "chat" / f"{case_id}.yaml", tmp_path / f"{case_id}.yaml")
    chosen = select_chat_cases(EVALS, cases=tmp_path)
    assert _ids(chosen) == ["c2084", "r2003"]
    assert chosen[0][0].log_path.parent == EVALS / "cases" / "c2084"  # the bundled case of that id
    assert len(chosen[1][1]) == len(yaml.safe_load((EVALS / "chat" / "r2003.yaml").read_text()))
    assert _ids(select_chat_cases(EVALS, cases=tmp_path, split="dev")) == ["r2003"]  # the split narrows the folder


def test_cases_folder_of_cases_asks_their_questions_and_skips_cases_without(tmp_path: Path) -> None:
    cases = tmp_path / "cases"
    for case_id in ("c2084", "c1000"):
        shutil.copytree(EVALS / "cases" / case_id, cases / case_id)
    no_questions = next(p.name for p in sorted((EVALS / "cases").iterdir()) if not (EVALS / "chat" / f"{p.name}.yaml").exists())
    shutil.copytree(EVALS / "cases" / no_questions, cases / no_questions)
    chosen = select_chat_cases(EVALS, cases=cases)
    assert _ids(chosen) == ["c1000", "c2084"]
    assert all(case.log_path.is_relative_to(cases) for case, _ in chosen)  # the folder's copy of the case is diagnosed
    with pytest.raises(InputError, match="no chat questions"):
        select_chat_cases(EVALS, cases=cases, split="dev")


def test_a_test_labelled_case_with_questions_is_refused_not_skipped(tmp_path: Path) -> None:
    cases = tmp_path / "cases"
    shutil.copytree(EVALS / "cases" / "c2084", cases / "c2084")  # a synthetic case relabelled: no real test case is opened
    label = yaml.safe_load((cases / "c2084" / "label.yaml").read_text())
    (cases / "c2084" / "label.yaml").write_text(yaml.safe_dump({**label, "split": "test", "origin": "real"}))
    with pytest.raises(InputError, match="dev split only"):
        select_chat_cases(EVALS, cases=cases)


def test_cases_folder_with_both_or_neither_is_refused(tmp_path: Path) -> None:
    with pytest.raises(InputError, match="no question files or case folders"):
        select_chat_cases(EVALS, cases=tmp_path)
    shutil.copytree(EVALS / "cases" / "c2084", tmp_path / "c2084")
    shutil.copy(EVALS / "chat" / "c1000.yaml", tmp_path / "c1000.yaml")
    with pytest.raises(InputError, match="both question files"):
        select_chat_cases(EVALS, cases=tmp_path)
    with pytest.raises(InputError, match="no such folder"):
        select_chat_cases(EVALS, cases=tmp_path / "missing")


def _cli(*args: str) -> subprocess.CompletedProcess[str]:
    command = [sys.executable, "-m", "diagnose", "eval", "--chat", "--no-retrieval", *args]
    return subprocess.run(command, capture_output=True, text=True, timeout=300)


def test_cli_chat_eval_honours_cases_and_split(tmp_path: Path) -> None:
    shutil.copy(EVALS / "chat" / "c2084.yaml", tmp_path / "c2084.yaml")
    asked = len(yaml.safe_load((EVALS / "chat" / "c2084.yaml").read_text()))
    done = _cli("--cases", str(tmp_path), "--json")
    assert done.returncode == 0, done.stderr
    summary = json.loads(done.stdout)
    assert summary["cases"] == 1 and summary["questions"] == asked
    assert {r["case"] for r in summary["results"]} == {"c2084"}
    done = _cli("--cases", str(tmp_path), "--split", "dev")
    assert done.returncode == 2 and "no chat questions" in done.stderr
    done = _cli("--split", "test")
    assert done.returncode == 2 and "dev split only" in done.stderr and not done.stdout
    done = _cli("--cases", str(tmp_path), "--baseline", str(tmp_path / "old.json"))  # a diagnosis flag is not ignored
    assert done.returncode == 2 and "--baseline score the diagnosis" in done.stderr and not done.stdout


def test_cli_chat_eval_split_dev_asks_the_dev_cases_only() -> None:
    done = _cli("--split", "dev", "--json")
    assert done.returncode == 0, done.stderr
    summary = json.loads(done.stdout)
    dev = select_chat_cases(EVALS, split="dev")
    assert summary["cases"] == len(dev) and {r["case"] for r in summary["results"]} == set(_ids(dev))
    assert summary["questions"] == sum(len(qs) for _, qs in dev)
