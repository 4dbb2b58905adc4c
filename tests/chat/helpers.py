"""Open a chat session on a bundled eval case, as ``diagnose chat`` does."""

from __future__ import annotations

from pathlib import Path

from diagnose.chat.session import ChatSession
from diagnose.parse.ingest import resolve_sources
from diagnose.pipeline import diagnose
from diagnose.settings import load_settings
from tests.conftest import EXAMPLES, REPO

OOM = EXAMPLES / "multi-rank-oom.log"


def case_log(case_id: str) -> Path:
    """The log of an eval case (synthetic or real)."""
    for folder in (REPO / "evals" / "cases" / case_id, REPO / "evals" / "real" / case_id):
        if folder.is_dir():
            return folder / "logs" if (folder / "logs").is_dir() else folder / "log.txt"
    raise FileNotFoundError(case_id)


def open_session(path: Path) -> ChatSession:
    """Diagnose a log offline and open a chat session on it, with the log's redactor state."""
    result = diagnose(resolve_sources([str(path)]), settings=load_settings(retrieval=False))
    return ChatSession(diagnosis=result.diagnosis, log=result.log, redactor_state=result.redactor_state)
