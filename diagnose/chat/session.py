"""A conversation about a diagnosed run, as data: the session, its turns, citations and answers.

A ChatSession holds masked data only: the diagnosis, the ParsedLog and the history. Who answers is
a ``Responder``, injected: the offline answers (``diagnose.chat.offline``) or a model's
(``diagnose.llm.chat``); ``diagnose.chat.conversation`` records the turns.
"""

from __future__ import annotations

import secrets
from collections.abc import Callable, Iterator
from typing import Any, Literal

from pydantic import BaseModel, Field

from diagnose.engine.fr_models import FRFacts
from diagnose.parse.parsed_log import ParsedLog
from diagnose.schema import Diagnosis


class Citation(BaseModel):
    """A source an answer relies on: a log line, an encyclopedia section, or a Flight Recorder dump entry."""

    kind: Literal["log", "kb", "dump"]
    file: str | None = None
    line: int | None = None
    rank: int | None = None
    entry_id: str | None = None
    section: str | None = None
    text: str = ""
    record_id: int | None = Field(default=None, description="dump citations: the entry's record_id (None: from pg_status)")


class Answer(BaseModel):
    """An answer and its citations."""

    answer: str
    citations: list[Citation] = Field(default_factory=list)
    grounded: bool = Field(default=True, description="False when the answer is only the closest material found")


class Message(BaseModel):
    """One turn of the conversation."""

    role: Literal["user", "assistant"]
    content: str
    citations: list[Citation] = Field(default_factory=list)


class ChatSession(BaseModel):
    """A conversation about one diagnosed run (masked data only)."""

    id: str = Field(default_factory=lambda: secrets.token_urlsafe(24))
    diagnosis: Diagnosis
    log: ParsedLog
    history: list[Message] = Field(default_factory=list)
    redactor_state: dict[str, Any] | None = Field(
        default=None, description="the log's masking state (JSON-safe, raw values only as keyed hashes), to mask questions alike"
    )
    flight_recorder: FRFacts | None = Field(
        default=None, description="what the run's Flight Recorder dumps say (masked; per-rank answers, not the dumps), when it had any"
    )


Responder = Callable[[ChatSession, str], Iterator["str | Answer"]]
"""Answers one (masked) question: text pieces as they come, then the final ``Answer``."""
