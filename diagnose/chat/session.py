"""A conversation about a diagnosed run, as data: the session, its turns, citations and answers.

A ChatSession holds masked data only: the diagnosis, the ParsedLog and the history. Who answers is
a ``Responder``, injected: the offline answers (``diagnose.chat.offline``) or a model's
(``diagnose.llm.chat``); ``diagnose.chat.conversation`` records the turns.
"""

from __future__ import annotations

import secrets
from collections.abc import Callable, Iterator
from typing import Literal

from pydantic import BaseModel, Field

from diagnose.parse.parsed_log import ParsedLog
from diagnose.schema import Diagnosis


class Citation(BaseModel):
    """A source an answer relies on: a log line or an encyclopedia section."""

    kind: Literal["log", "kb"]
    file: str | None = None
    line: int | None = None
    rank: int | None = None
    entry_id: str | None = None
    section: str | None = None
    text: str = ""


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


Responder = Callable[[ChatSession, str], Iterator["str | Answer"]]
"""Answers one (masked) question: text pieces as they come, then the final ``Answer``."""
