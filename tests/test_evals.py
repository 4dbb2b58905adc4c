"""The evals: the CI gate against the committed baseline, the --json contract, and the LLM path.

The gate runs the rules backend over every labeled case of every split (the full path, masking included)
and fails when a ``test``-split case that passed at the baseline now fails, when a split's aggregate
(top-1, rank accuracy over proven ranks, unknown precision) falls below evals/baseline.json by more than
one case, or when any planted secret leaks. Failing test-split cases are counted, never named: that
split is frozen, only its aggregate is read.
"""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from diagnose.bundled import evals_dir
from diagnose.evaluation.cases import load_cases, load_split
from diagnose.evaluation.run import markdown_report, run_suite
from diagnose.evaluation.score import leaks
from diagnose.llm.client import LiteLLMClient
from diagnose.pipeline import open_backends
from diagnose.settings import load_settings
from tests.fake_openai import FakeOpenAI, top_candidate_reply

BASELINE = evals_dir() / "baseline.json"
KEYS = {
    "cases",
    "top1",
    "top3",
    "per_class",
    "confusion",
    "rank_accuracy",
    "evidence_recall",
    "unknown_precision",
    "unknown_recall",
    "secrets_leaked",
    "latency_p50",
    "latency_p95",
    "backend",
}


@pytest.fixture(scope="module")
def all_summary() -> dict[str, Any]:
    settings = load_settings()
    _, index = open_backends(settings)
    return run_suite(load_split(evals_dir(), "all"), settings, index=index)


@pytest.fixture(scope="module")
def rules_summary(all_summary: dict[str, Any]) -> dict[str, Any]:
    """The synthetic split's figures."""
    return dict(all_summary["splits"]["synthetic"])


def test_suite_is_complete(all_summary: dict[str, Any]) -> None:
    synthetic = all_summary["splits"]["synthetic"]
    assert synthetic["cases"] >= 90
    assert all(row["cases"] >= 3 for row in synthetic["per_class"].values())
    assert synthetic["per_class"]["unknown"]["cases"] >= 5
    assert {"dev", "test"} <= set(all_summary["splits"]), "evals/real holds no dev or test case"


def test_no_planted_secret_leaks(all_summary: dict[str, Any]) -> None:
    print("\n" + markdown_report(all_summary))
    leaked = [r["id"] for r in all_summary["results"] if r["leaked"]]
    assert all_summary["secrets_leaked"] == 0, leaked


@pytest.mark.parametrize(
    ("secret", "text", "leaked"),
    [
        ("/p/home/jusers/mueller7", 'File "/p/home/jusers/<USER_1>/olmo/train.py", line 388', False),  # the folders are no secret
        ("/p/home/jusers/mueller7", "cd /work/mueller7/olmo", True),  # the user's name is
        ("/home/ubuntu", "/home/<USER_1>/ubuntu-22.04.iso", False),
        ("/home/ubuntu", "cat /home/ubuntu/.netrc", True),
        ("uN7Jk4Ljm2liYOt1i/kwfmk2i9g/IdhAxolkEbEg", "AWS_SECRET=uN7Jk4Ljm2liYOt", True),  # a 12-character run of a key
    ],
)
def test_leaks_are_whole_secrets_key_runs_or_a_directory_user(secret: str, text: str, leaked: bool) -> None:
    assert (leaks([secret], [text]) == [secret]) is leaked


def _shortfall(now: dict[str, Any], before: dict[str, Any], figure: str, denominator: str) -> float:
    """How many cases' worth a figure fell below its baseline (negative when it rose)."""
    if before.get(figure) is None or now.get(figure) is None:
        return 0.0
    cases = now[denominator] if denominator in now else now["counts"][denominator]
    return (before[figure] - now[figure]) * max(cases, 1)


@pytest.mark.parametrize("split", ["synthetic", "dev", "test"])
def test_gate_no_split_aggregate_falls_by_more_than_one_case(all_summary: dict[str, Any], split: str) -> None:
    baseline = json.loads(BASELINE.read_text())["splits"].get(split)
    if baseline is None:
        pytest.skip(f"no baseline for the {split} split yet")
    now = all_summary["splits"][split]
    for figure, denominator in (("top1", "cases"), ("rank_accuracy", "rank_cases"), ("unknown_precision", "said_unknown")):
        fell = _shortfall(now, baseline, figure, denominator)
        assert fell <= 1.0 + 1e-9, f"{split} {figure}: {baseline[figure]} at the baseline, {now[figure]} now"


def _passed(row: dict[str, Any]) -> bool:
    return bool(row["correct"]) and row.get("rank_correct") is not False


def test_gate_no_test_case_that_passed_at_the_baseline_fails(all_summary: dict[str, Any]) -> None:
    passed_before = {r["id"] for r in json.loads(BASELINE.read_text())["results"] if r.get("split") == "test" and _passed(r)}
    now = {r["id"]: r for r in all_summary["results"] if r["split"] == "test"}
    regressed = sum(1 for case_id in passed_before if case_id in now and not _passed(now[case_id]))
    missing = sum(1 for case_id in passed_before if case_id not in now)
    # counted, never named: the test split is frozen and its failures are not read
    assert regressed == 0, f"{regressed} test-split case(s) that passed at the baseline now fail"
    assert missing == 0, f"{missing} test-split case(s) of the baseline are gone"


def test_eval_json_prints_the_keys_at_top_level(tmp_path: Path) -> None:
    cases = sorted(p for p in (evals_dir() / "cases").iterdir() if p.is_dir())[:3]
    for case in cases:
        shutil.copytree(case, tmp_path / case.name)
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "diagnose",
            "eval",
            "--cases",
            str(tmp_path),
            "--json",
            "--no-retrieval",
            "--report",
            str(tmp_path / "report.md"),
        ],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0, done.stderr
    data = json.loads(done.stdout)
    assert set(data) >= KEYS and data["cases"] == 3
    assert "| top1 |" in (tmp_path / "report.md").read_text()
    baseline = tmp_path / "old.json"
    baseline.write_text(done.stdout)
    again = subprocess.run(
        [sys.executable, "-m", "diagnose", "eval", "--cases", str(tmp_path), "--no-retrieval", "--baseline", str(baseline)],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert "top1:" in again.stderr


def test_model_agreeing_with_rules_scores_no_worse(rules_summary: dict[str, Any]) -> None:
    settings = load_settings()
    _, index = open_backends(settings)
    with FakeOpenAI() as fake:
        fake.default_reply = top_candidate_reply
        client = LiteLLMClient(load_settings(model="openai/fake-echo", api_base=fake.api_base))
        summary = run_suite(load_cases(evals_dir() / "cases"), settings, llm=client, index=index)
    assert summary["backend"] == "openai/fake-echo"
    assert summary["top1"] >= rules_summary["top1"]
    assert summary["secrets_leaked"] == 0


def test_real_cases_carry_their_split_and_provenance() -> None:
    real = load_cases(evals_dir() / "real")
    assert real, "evals/real is empty"
    for case in real:
        label = case.label
        assert label.split in ("dev", "test"), case.id
        assert label.origin == "real" and label.source and label.source.startswith("http"), case.id
        assert isinstance(label.rank_proven, bool), case.id
        assert not (label.rank_proven and label.initiating_rank is None), f"{case.id}: rank proven but none labeled"


_COMMITTED = re.compile(r"https://github\.com/([^/]+/[^/]+)/blob/[0-9a-f]{7,40}/(.+)$")


def test_no_two_real_cases_share_a_source() -> None:
    """One report, one case: two excerpts of one thread would count its failure twice (and could straddle the splits).
    A committed file cited at two commits is one source too, unless both copies sit in one split (the file was
    overwritten by another run): a copy on each side would let `dev` work read a `test` log."""
    by_source: dict[str, list[str]] = {}
    by_file: dict[tuple[str, str], set[str]] = {}
    for case in load_cases(evals_dir() / "real"):
        source = str(case.label.source)
        by_source.setdefault(source, []).append(case.id)
        committed = _COMMITTED.match(source)
        if committed:
            by_file.setdefault((committed.group(1).lower(), committed.group(2)), set()).add(str(case.label.split))
    shared = {source: ids for source, ids in by_source.items() if len(ids) > 1}
    assert not shared, shared
    straddling = [file for file, splits in by_file.items() if len(splits) > 1]
    assert not straddling, straddling


TWIN_SHARE = 0.8
"""A `test` log and a `dev` log of one repository sharing this share of the shorter one's lines are one run, not held out."""


def test_no_test_log_is_mostly_a_dev_log_of_the_same_repository() -> None:
    """Committed logs of one repository (runs of the same script) fall in both splits by their URLs' hashes; one whose lines
    are mostly another's, either way round (the same run continued, re-run, copied, cut), would let `dev` work read a
    `test` log."""
    by_repo: dict[str, list[tuple[str, str, set[str]]]] = {}
    for case in load_cases(evals_dir() / "real"):
        committed = _COMMITTED.match(str(case.label.source))
        log = case.log_path
        if committed and log.is_file():
            lines = {line.strip() for line in log.read_text(encoding="utf-8", errors="replace").split("\n") if len(line.strip()) > 30}
            by_repo.setdefault(committed.group(1).lower(), []).append((case.id, str(case.label.split), lines))
    twins = [
        (test_id, dev_id)
        for cases in by_repo.values()
        for test_id, split, lines in cases
        if split == "test" and len(lines) >= 20
        for dev_id, other, dev_lines in cases
        if other == "dev" and len(dev_lines) >= 20 and len(lines & dev_lines) >= TWIN_SHARE * min(len(lines), len(dev_lines))
    ]
    assert not twins, f"{len(twins)} test logs repeat a dev log"


def test_rank_counts_only_where_proven_and_test_failures_stay_unnamed() -> None:
    from diagnose.evaluation.cases import Label
    from diagnose.evaluation.score import CaseResult, compare, figures, score_case, summarize
    from diagnose.schema import Diagnosis, Redactions, RootCause

    said = Diagnosis(root_cause=RootCause(id="cuda-oom", title="x", confidence=0.9), redactions=Redactions(), initiating_rank=1)
    unproven = Label(**{"class": "cuda-oom", "initiating_rank": 3, "rank_proven": False, "split": "dev", "source": "https://x"})
    proven = Label(**{"class": "cuda-oom", "initiating_rank": 3, "rank_proven": True, "split": "test", "source": "https://x"})
    synthetic = Label(**{"class": "segfault", "initiating_rank": 1})
    rows: list[CaseResult] = [
        score_case("r1", unproven, said, 0.0, []),
        score_case("r2", proven, said, 0.0, []),
        score_case("c1", synthetic, said, 0.0, []),
    ]
    assert [r.rank_correct for r in rows] == [None, False, True]
    assert figures(rows, "rules")["rank_cases"] == 2
    before = summarize(rows, "rules")
    after = summarize([r.model_copy(update={"correct": not r.correct}) for r in rows], "rules")
    lines = "\n".join(compare(after, before))
    assert "c1" in lines and "r2" not in lines and "test: better: 0" not in lines
    assert "test: WORSE" in lines or "test: better" in lines
    assert set(after["splits"]) == {"synthetic", "dev", "test"}
