"""The product with a real local model: ``diagnose eval`` on a few synthetic cases, rules only and through the model.

    python bench/bench_local_model.py                       # server on 127.0.0.1:8089, 15 cases, --fast
    python bench/bench_local_model.py --cases 5 --no-fast --llm-timeout 300
    python bench/bench_local_model.py --chat 3              # also the chat eval on 3 cases' evals/chat questions

The model is served by an OpenAI-compatible server on this machine (docs/local-model.md says how:
llama-cpp-python serving a GGUF file that a PyPI package ships). Only a loopback address is accepted;
when nothing answers there the benchmark says so and exits 0 without running anything.

What it does, bounded: copies ``--cases`` cases, evenly spread over ``evals/cases`` (the synthetic
split; ``evals/real`` is never read, so never a ``test`` case), into a temporary folder; runs one case
through the model first and, from its time, cuts the number of cases to fit ``--budget`` seconds;
then runs ``diagnose eval --cases <folder> --json`` rules only, then with ``--model``/``--api-base``,
in a fresh ``DIAGNOSE_HOME`` (the rules run caches no model answer, so none is reused). It prints, with
the date and commit: top-1 rules vs with the model, how often the model's answer was used or fell back
(and why), seconds per case, and one Markdown table row for docs/local-model.md. With ``--chat N`` it
also scores the follow-up chat, offline and through the model, on the ``evals/chat`` questions of N
synthetic cases (a folder of their question files, as ``diagnose eval --chat --cases`` takes).
No assert: figures only.
"""

from __future__ import annotations

import argparse
import datetime
import ipaddress
import json
import math
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.request
from collections import Counter
from pathlib import Path
from typing import Any
from urllib.parse import urlparse

ROOT = Path(__file__).resolve().parent.parent
CASES = ROOT / "evals" / "cases"
CHAT = ROOT / "evals" / "chat"
REASONS = (
    ("no answer within", "timed out"),
    ("not asked", "not asked (no candidate)"),
    ("model answer rejected", "rejected by grounding"),
    ("context window", "prompt too long"),
    ("model unavailable", "unavailable / refused"),
)


def loopback(api_base: str) -> bool:
    """True when the server's address is on this machine (127.0.0.0/8, ::1, localhost)."""
    host = urlparse(api_base).hostname or ""
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def served_models(api_base: str, timeout: float = 3.0) -> list[str] | None:
    """The ids ``GET /models`` lists, or None when nothing answers there."""
    try:
        with urllib.request.urlopen(api_base.rstrip("/") + "/models", timeout=timeout) as response:
            data = json.load(response)
    except (OSError, urllib.error.URLError, ValueError):
        return None
    return [str(m.get("id")) for m in data.get("data", []) if isinstance(m, dict)]


def pick_cases(count: int, into: Path) -> list[str]:
    """Copy ``count`` synthetic cases, evenly spread over the sorted ids, into ``into``; their ids."""
    ids = sorted(p.name for p in CASES.iterdir() if (p / "label.yaml").is_file())
    step = max(len(ids) / max(count, 1), 1.0)
    chosen = sorted({ids[min(int(i * step), len(ids) - 1)] for i in range(min(count, len(ids)))})
    into.mkdir(parents=True, exist_ok=True)
    for case_id in chosen:
        shutil.copytree(CASES / case_id, into / case_id)
    return chosen


def run_eval(folder: Path, home: Path, extra: list[str], limit: float) -> tuple[dict[str, Any] | None, float, str]:
    """``diagnose eval --cases folder --json`` plus ``extra``: (summary or None, wall seconds, stderr tail)."""
    env = {**os.environ, "DIAGNOSE_HOME": str(home)}
    argv = [sys.executable, "-m", "diagnose", "eval", "--cases", str(folder), "--json", *extra]
    started = time.perf_counter()
    try:
        done = subprocess.run(argv, env=env, capture_output=True, text=True, timeout=limit, check=False)
    except subprocess.TimeoutExpired:
        return None, time.perf_counter() - started, f"stopped after {limit:.0f} s"
    wall = time.perf_counter() - started
    try:
        return json.loads(done.stdout), wall, done.stderr[-400:]
    except json.JSONDecodeError:
        return None, wall, (done.stderr or done.stdout)[-400:]


def outcome(result: dict[str, Any], model: str) -> str:
    """Whether the model's answer was used for a case, or why the rules' answer stood."""
    if result.get("backend") == model:
        return "used"
    text = " ".join(result.get("notes") or [])
    return next((label for marker, label in REASONS if marker in text), "fell back (other)")


def model_note(result: dict[str, Any]) -> str:
    """The note that says what became of the model's answer, if any."""
    markers = ("model", "rules' answer used")
    return next((n for n in result.get("notes") or [] if any(m in n for m in markers)), "")


def capabilities() -> tuple[list[str], bool]:
    """The model flags ``diagnose eval`` has now, and whether it has ``--chat``."""
    done = subprocess.run([sys.executable, "-m", "diagnose", "eval", "--help"], capture_output=True, text=True, check=False)
    flags = sorted(set(re.findall(r"--[a-z][a-z-]+", done.stdout)))
    return flags, "--chat" in flags


def commit() -> str:
    """The short commit of the work tree (uncommitted changes are not in it)."""
    done = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=ROOT, capture_output=True, text=True, check=False)
    dirty = subprocess.run(["git", "status", "--porcelain", "--", "diagnose"], cwd=ROOT, capture_output=True, text=True, check=False)
    return (done.stdout.strip() or "unknown") + ("+dirty" if dirty.stdout.strip() else "")


def model_args(args: argparse.Namespace, model: str) -> list[str]:
    """The model flags of one run."""
    extra = ["--model", model, "--api-base", args.api_base, "--llm-timeout", str(args.llm_timeout), "--context", str(args.context)]
    return extra + (["--fast"] if args.fast else [])


def probe(args: argparse.Namespace, model: str, work: Path) -> float | None:
    """Seconds one case takes through the model (the first of the chosen ones), or None when the run failed."""
    one = work / "probe"
    pick_cases(1, one)
    summary, wall, tail = run_eval(one, work / "home-probe", model_args(args, model), args.llm_timeout * 3 + 120)
    if summary is None:
        print(f"probe failed: {tail}")
        return None
    result = summary["results"][0]
    print(f"probe: {result['id']} took {result['seconds']:.1f} s ({wall:.1f} s with start-up): {outcome(result, model)}")
    return max(wall, 1.0)


def report(rules: dict[str, Any], with_model: dict[str, Any], model: str, args: argparse.Namespace) -> None:
    """Print the figures, the per-case table and the docs' table row."""
    by_id = {r["id"]: r for r in rules["results"]}
    outcomes = Counter(outcome(r, model) for r in with_model["results"])
    seconds = [r["seconds"] for r in with_model["results"]]
    rule_seconds = [r["seconds"] for r in rules["results"]]
    print(f"\n{'case':7} {'expected':28} {'rules':28} {'with model':28} {'s':>6}  outcome / note")
    for r in with_model["results"]:
        base = by_id.get(r["id"], {})
        note = model_note(r)[:110]
        print(f"{r['id']:7} {r['expected']:28} {base.get('got', '?'):28} {r['got']:28} {r['seconds']:6.1f}  {outcome(r, model)}: {note}")
    n = with_model["cases"]
    used = outcomes.get("used", 0)
    print(
        f"\ncases: {n}; top-1 rules {rules['top1']} -> with model {with_model['top1']}; rank accuracy {rules['rank_accuracy']} -> "
        f"{with_model['rank_accuracy']}; evidence recall {rules['evidence_recall']} -> {with_model['evidence_recall']}"
    )
    print(f"model answer used: {used}/{n}; fell back: " + ", ".join(f"{k} {v}" for k, v in outcomes.items() if k != "used"))
    print(
        f"seconds per case with the model: median {statistics.median(seconds):.1f}, max {max(seconds):.1f}, "
        f"mean {statistics.fmean(seconds):.1f} (rules only: median {statistics.median(rule_seconds):.2f})"
    )
    print(f"secrets leaked: rules {rules['secrets_leaked']}, with model {with_model['secrets_leaked']}")
    mode = ("--fast " if args.fast else "") + f"--llm-timeout {args.llm_timeout:g} --context {args.context}"
    fell = n - used
    print("\nrow for docs/local-model.md:")
    print(
        f"| {datetime.date.today()} | {args.commit} | {model} | {mode} | {n} | {rules['top1']} | {with_model['top1']} | "
        f"{used} / {fell} | {statistics.median(seconds):.1f} (max {max(seconds):.1f}) |"
    )


CHAT_FIGURES = ("questions", "fact_recall", "must_recall", "cite_recall", "forbidden_found", "citations_valid", "honest_unknown", "leaks")


def chat_child(chat_dir: Path, args: argparse.Namespace, model: str | None) -> None:
    """In a child process: the chat eval on the question files in ``chat_dir`` only; prints its JSON figures.

    The same as ``diagnose eval --chat --cases <chat_dir>``, with only the figures the table needs (all
    the questions, about 300, take about an hour through a CPU model).
    """
    from diagnose.bundled import evals_dir
    from diagnose.evaluation.chat_eval import run_chat_eval
    from diagnose.pipeline import open_llm
    from diagnose.settings import load_settings

    flags: dict[str, Any] = {}
    if model:
        flags = {"model": model, "api_base": args.api_base, "llm_timeout": args.llm_timeout, "context": args.context}
        flags["fast"] = args.fast or None
    settings = load_settings(**flags)
    summary = run_chat_eval(evals_dir(), settings, llm=open_llm(settings), cases=chat_dir)
    print(json.dumps({k: v for k, v in summary.items() if k in ("backend", "cases", *CHAT_FIGURES)}))


def chat_eval(args: argparse.Namespace, model: str, work: Path) -> list[str]:
    """The follow-up chat eval, offline and through the model, on ``--chat`` synthetic cases that have question files."""
    ids = sorted(p.stem for p in CHAT.glob("*.yaml") if (CASES / p.stem / "label.yaml").is_file())
    step = max(len(ids) / args.chat, 1.0)
    chosen = sorted({ids[min(int(i * step), len(ids) - 1)] for i in range(min(args.chat, len(ids)))})
    folder = work / "chat-questions"
    folder.mkdir()
    for case_id in chosen:
        shutil.copy(CHAT / f"{case_id}.yaml", folder / f"{case_id}.yaml")
    print(f"\nchat eval on {' '.join(chosen)}")
    rows = []
    for label, extra in (("offline", []), (model, ["--chat-model", model])):
        env = {**os.environ, "DIAGNOSE_HOME": str(work / f"home-chat-{len(extra)}")}
        argv = [sys.executable, __file__, "--chat-child", str(folder), "--api-base", args.api_base, "--llm-timeout", str(args.llm_timeout)]
        argv += ["--context", str(args.context), "--fast" if args.fast else "--no-fast", *extra]
        started = time.perf_counter()
        try:
            done = subprocess.run(argv, env=env, capture_output=True, text=True, timeout=args.budget, check=False)
        except subprocess.TimeoutExpired:
            print(f"chat eval ({label}) stopped after {args.budget:.0f} s")
            continue
        wall = time.perf_counter() - started
        try:
            figures = json.loads(done.stdout.strip().splitlines()[-1])
        except (json.JSONDecodeError, IndexError):
            print(f"chat eval ({label}) failed: {(done.stderr or done.stdout)[-400:]}")
            continue
        per_q = wall / max(int(figures.get("questions") or 1), 1)
        print(f"chat eval ({label}): {wall:.0f} s, {per_q:.1f} s a question: {json.dumps(figures)}")
        rows.append(
            f"| {label} | {len(chosen)} | {figures.get('questions')} | {figures.get('fact_recall')} | {figures.get('cite_recall')} | "
            f"{figures.get('forbidden_found')} | {figures.get('citations_valid')} | {figures.get('leaks')} | {per_q:.1f} |"
        )
    return rows


def main() -> int:
    """Check the server, bound the run, run both evals, print the figures."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--api-base", default="http://127.0.0.1:8089/v1")
    parser.add_argument("--model", help="litellm model string (default: openai/<the first id the server lists>)")
    parser.add_argument("--cases", type=int, default=15, help="synthetic cases, evenly spread (default 15)")
    parser.add_argument("--budget", type=float, default=1800, help="seconds the model run may take; fewer cases when it would not fit")
    parser.add_argument("--llm-timeout", type=float, default=180)
    parser.add_argument("--context", type=int, default=8192, help="the server's --n_ctx")
    parser.add_argument("--fast", action=argparse.BooleanOptionalAction, default=True)
    parser.add_argument("--chat", type=int, default=0, help="also run the chat eval on this many cases (where --chat exists)")
    parser.add_argument("--json-out", type=Path, help="write both runs' JSON here")
    parser.add_argument("--chat-child", type=Path, help=argparse.SUPPRESS)
    parser.add_argument("--chat-model", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.chat_child:
        chat_child(args.chat_child, args, args.chat_model)
        return 0

    if not loopback(args.api_base):
        print(f"refused: {args.api_base} is not a loopback address; this benchmark only talks to a server on this machine")
        return 2
    served = served_models(args.api_base)
    if served is None:
        print(f"skipped: no OpenAI-compatible server answers at {args.api_base} (see docs/local-model.md to start one)")
        return 0
    model = args.model or f"openai/{served[0] if served else 'local'}"
    flags, has_chat = capabilities()
    args.commit = commit()  # at the start: the lead may commit while a run goes on
    print(f"{datetime.datetime.now(datetime.UTC):%Y-%m-%d %H:%M} UTC, commit {args.commit}, server {args.api_base} serves {served}")
    print(f"diagnose eval flags: {' '.join(f for f in flags if f in ('--fast', '--llm-timeout', '--max-tokens', '--context', '--chat'))}")
    if not args.fast or "--fast" not in flags:
        args.fast = args.fast and "--fast" in flags

    with tempfile.TemporaryDirectory(prefix="bench-local-model-") as tmp:
        work = Path(tmp)
        per_case = probe(args, model, work)
        if per_case is None:
            return 1
        fits = max(int(args.budget // per_case), 1)
        count = min(args.cases, fits)
        if count < args.cases:
            print(f"budget {args.budget:.0f} s at ~{per_case:.0f} s a case: {count} cases instead of {args.cases}")
        print(f"expected: ~{math.ceil(count * per_case / 60)} min for {count} cases")
        folder = work / "cases"
        chosen = pick_cases(count, folder)
        print(f"cases: {' '.join(chosen)}")
        home = work / "home"
        rules, _, tail = run_eval(folder, home, [], 600)
        if rules is None:
            print(f"rules-only run failed: {tail}")
            return 1
        with_model, wall, tail = run_eval(folder, home, model_args(args, model), args.budget + 600)
        if with_model is None:
            print(f"model run failed: {tail}")
            return 1
        print(f"model run: {wall:.0f} s wall for {count} cases")
        report(rules, with_model, model, args)
        if args.json_out:
            args.json_out.write_text(json.dumps({"rules": rules, "model": with_model}, indent=1) + "\n", encoding="utf-8")
        if args.chat:
            if has_chat:
                rows = chat_eval(args, model, work)
                print("\nrows for docs/local-model.md (chat):")
                print("\n".join(rows))
            else:
                print("chat eval skipped: this diagnose has no `eval --chat` yet")
    return 0


if __name__ == "__main__":
    sys.exit(main())
