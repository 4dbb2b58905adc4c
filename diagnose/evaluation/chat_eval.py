"""The follow-up chat eval: ``evals/chat/<case-id>.yaml`` questions asked about their case's log, scored.

Each question file names its case by its file name: ``evals/cases/<id>/`` or ``evals/real/<id>/`` (real
cases of the ``dev`` split only; a ``test`` case is refused). The case is diagnosed through the full
product path (masking included), a chat session is opened on it like ``diagnose chat`` does, and every
question is asked in order, offline or through a model. Secrets planted in the label must never
appear in an answer, the session or a request to the model.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from pydantic import TypeAdapter, ValidationError

from diagnose.chat.conversation import ask
from diagnose.chat.session import ChatSession
from diagnose.errors import DiagnoseError, InputError
from diagnose.evaluation.cases import SPLITS, Case, Label, load_cases
from diagnose.evaluation.chat_score import ChatQuestion, QuestionResult, score_answer, summarize_chat
from diagnose.evaluation.run import RecordingLLM
from diagnose.evaluation.score import leaks
from diagnose.parse.ingest import resolve_sources
from diagnose.parse.parsed_log import ParsedLog
from diagnose.parse.sources import masked_name
from diagnose.pipeline import chat_responder, diagnose
from diagnose.schema import Diagnosis
from diagnose.settings import Settings
from diagnose.yaml_text import YAMLError, load_yaml

if TYPE_CHECKING:
    from diagnose.llm.client import LLMClient

_QUESTIONS = TypeAdapter(list[ChatQuestion])
_TEMPLATE = re.compile(r"\{(host|file):([^{}]+)\}")


def masked_host(raw: str, state: dict[str, Any] | None) -> str:
    """The placeholder the log's masking gave a raw host name (a fresh masker's, without the log's state)."""
    from redaction import Redactor

    redactor = Redactor.from_state(state) if state is not None else Redactor()
    return str(redactor.redact_text(f"MASTER_ADDR={raw}")).removeprefix("MASTER_ADDR=")


def masked_source(raw: str, case: Case, log: ParsedLog, state: dict[str, Any] | None) -> str:
    """The name the log shows for a raw file of the case (``node02/stderr.log`` -> ``<HOST_2>/stderr.log``).

    Its own name when kept; else the only kept source with as many lines; else the masking of the name.
    """
    from redaction import Redactor

    if raw in log.sources:
        return raw
    path = case.log_path / raw if case.log_path.is_dir() else case.log_path
    if path.is_file():
        count = len(path.read_bytes().splitlines())
        same = [s for s in log.sources if len(log.lines.get(s, ())) == count]
        if len(same) == 1:
            return same[0]
    return masked_name(raw, Redactor.from_state(state) if state is not None else Redactor())


def resolve_question(question: ChatQuestion, case: Case, log: ParsedLog, state: dict[str, Any] | None) -> ChatQuestion:
    """Fill ``{host:<raw>}`` and ``{file:<raw>}`` with what the log's masking made of them.

    Facts name hosts and files as the label and the log do (raw); the answers only ever see placeholders,
    whose numbers depend on the masking. In ``must``/``must_not`` the value is matched literally.
    """

    def fill(text: str, *, pattern: bool) -> str:
        def value(match: re.Match[str]) -> str:
            kind, raw = match.groups()
            masked = masked_source(raw, case, log, state) if kind == "file" else masked_host(raw, state)
            return re.escape(masked) if pattern else masked

        return _TEMPLATE.sub(value, text)

    return question.model_copy(
        update={
            "q": fill(question.q, pattern=False),
            "must": [fill(p, pattern=True) for p in question.must],
            "must_not": [fill(p, pattern=True) for p in question.must_not],
            "cite": [fill(c, pattern=False) for c in question.cite],
        }
    )


def find_case(evals: Path, case_id: str) -> Case:
    """The case a question file is about: ``cases/<id>`` or a ``dev`` case of ``real/<id>``."""
    for folder in (evals / "cases" / case_id, evals / "real" / case_id):
        if (folder / "label.yaml").is_file():
            label = Label(**(load_yaml((folder / "label.yaml").read_text(encoding="utf-8")) or {}))
            if folder.parent.name == "real" and label.split != "dev":
                raise InputError(f"{case_id}: the chat eval uses real cases of the dev split only (this one is {label.split})")
            log_path = folder / "logs" if (folder / "logs").is_dir() else folder / "log.txt"
            return Case(id=case_id, log_path=log_path, label=label)
    raise InputError(f"{case_id}: no case folder evals/cases/{case_id} or evals/real/{case_id}")


def load_questions(chat_dir: Path) -> list[tuple[str, list[ChatQuestion]]]:
    """Every question file, sorted by case id: (case id, questions)."""
    files = sorted(chat_dir.glob("*.yaml")) if chat_dir.is_dir() else []
    if not files:
        raise InputError(f"{chat_dir}: no question files (<case-id>.yaml)")
    out: list[tuple[str, list[ChatQuestion]]] = []
    for path in files:
        try:
            out.append((path.stem, _QUESTIONS.validate_python(load_yaml(path.read_text(encoding="utf-8")) or [])))
        except (ValidationError, YAMLError) as exc:
            raise InputError(f"{path.name}: {exc}") from exc
    return out


def _question_files(folder: Path) -> bool:
    """True when ``folder`` holds ``<case-id>.yaml`` question files; False when it holds case folders (``<id>/label.yaml``).

    Refused when it holds both or neither, so a mistyped folder is not read as an empty eval.
    """
    if not folder.is_dir():
        raise InputError(f"{folder}: no such folder")
    questions = any(folder.glob("*.yaml"))
    cases = any((p / "label.yaml").is_file() for p in folder.iterdir())
    if questions == cases:
        what = "both question files (<case-id>.yaml) and case folders (<id>/label.yaml)" if cases else "no question files or case folders"
        raise InputError(f"{folder}: holds {what}; --chat --cases takes one or the other")
    return questions


def select_chat_cases(evals: Path, *, split: str = "all", cases: Path | None = None) -> list[tuple[Case, list[ChatQuestion]]]:
    """The cases to ask about, each with its questions, sorted by case id.

    - ``split``: ``synthetic`` (``evals/cases``), ``dev`` (``evals/real``) or ``all``; ``test`` is refused.
    - ``cases``: a folder of ``<case-id>.yaml`` question files (their cases are the bundled ones of that id),
      or a folder of cases (``<id>/label.yaml``: those cases, asked the ``evals/chat/<id>.yaml`` questions;
      cases without a question file are skipped). The split, when not ``all``, narrows either.
    Every case must be synthetic or a real ``dev`` case: a ``test`` case is refused, never skipped.
    """
    if split == "test":
        raise InputError("--split test: the chat eval uses real cases of the dev split only; the test split stays frozen")
    if split != "all" and split not in SPLITS:
        raise InputError(f"unknown split {split!r}: use synthetic, dev or all")
    chosen: list[tuple[Case, list[ChatQuestion]]] = []
    if cases is not None and not _question_files(cases):
        have = dict(load_questions(evals / "chat"))
        for case in load_cases(cases):
            if case.id not in have:
                continue
            if case.split == "test":
                raise InputError(f"{case.id}: the chat eval uses real cases of the dev split only (this one is test)")
            chosen.append((case, have[case.id]))
    else:
        chosen = [(find_case(evals, case_id), qs) for case_id, qs in load_questions(cases or evals / "chat")]
    chosen = [(case, qs) for case, qs in chosen if split == "all" or case.split == split]
    if not chosen:
        where = f"the cases in {cases}" if cases is not None else f"{evals / 'chat'}"
        raise InputError(f"no chat questions for {where}" + (f" in split {split!r}" if split != "all" else ""))
    return chosen


def run_chat_case(
    case: Case, questions: list[ChatQuestion], settings: Settings, llm: LLMClient | None
) -> tuple[list[QuestionResult], list[str]]:
    """Diagnose one case, ask its questions in one session, score them; (results, secrets leaked)."""
    recorder = RecordingLLM(llm) if llm is not None else None
    try:
        result = diagnose(resolve_sources([str(case.log_path)]), settings=settings, llm=recorder)
    except DiagnoseError as exc:
        return [
            QuestionResult(case=case.id, q=q.q, type=q.type, must_missed=q.must, cite_missed=q.cite, answer=f"error: {exc}")
            for q in questions
        ], []
    session = ChatSession(diagnosis=result.diagnosis, log=result.log, redactor_state=result.redactor_state)
    responder = chat_responder(recorder)
    results: list[QuestionResult] = []
    for question in (resolve_question(q, case, result.log, result.redactor_state) for q in questions):
        try:
            answer = ask(session, question.q, responder=responder)
        except DiagnoseError as exc:
            results.append(
                QuestionResult(
                    case=case.id,
                    q=question.q,
                    type=question.type,
                    must_missed=question.must,
                    cite_missed=question.cite,
                    answer=f"error: {exc}",
                )
            )
            continue
        scored = score_answer(case.id, question, answer, session.log)
        results.append(scored.model_copy(update={"diagnosis_right": _agrees(case, result.diagnosis)}))
    # what the chat produced: the recorded turns (questions as masked, answers, citations) and the model requests;
    # the masked log itself is the redaction eval's to check
    texts = [m.model_dump_json() for m in session.history] + (recorder.sent if recorder else [])
    return results, [f"{case.id}: {s}" for s in leaks(case.label.secrets, texts)]


def _agrees(case: Case, diagnosis: Diagnosis) -> bool:
    """The diagnosis has the label's class (or an accepted one) and its rank (none where the label names none)."""
    label = case.label
    return diagnosis.root_cause.id in {label.class_, *label.accept} and diagnosis.initiating_rank == label.initiating_rank


def run_chat_cases(
    chosen: list[tuple[Case, list[ChatQuestion]]],
    settings: Settings,
    *,
    llm: LLMClient | None = None,
    progress: Callable[[], None] | None = None,
) -> dict[str, object]:
    """Ask each case its questions (one session a case), then the figures (``diagnose eval --chat --json``)."""
    results: list[QuestionResult] = []
    leaked: list[str] = []
    for case, questions in chosen:
        found, lost = run_chat_case(case, questions, settings, llm)
        results += found
        leaked += lost
        if progress:
            progress()
    return summarize_chat(results, llm.model if llm else "rules", leaked, len(chosen))


def run_chat_eval(
    evals: Path,
    settings: Settings,
    *,
    llm: LLMClient | None = None,
    split: str = "all",
    cases: Path | None = None,
    progress: Callable[[], None] | None = None,
) -> dict[str, object]:
    """The question files under ``evals/chat`` chosen by ``split`` and ``cases`` (see :func:`select_chat_cases`), scored."""
    chosen = select_chat_cases(evals, split=split, cases=cases)
    return run_chat_cases(chosen, settings, llm=llm, progress=progress)
