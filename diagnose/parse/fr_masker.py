"""Mask every string of one raw dump with the caller's Redactor, once, before the typed dump is built."""

from __future__ import annotations

import re
from typing import Any

from diagnose.errors import InputError
from diagnose.parse.fr_model import ReadLimits
from redaction import Redactor

__all__ = ["Masker"]

_GLUED = re.compile(r"[.\-/@]")
_SCALARS = (int, float, bool, type(None))


class Masker:
    """Masks the strings of one raw dump with the caller's Redactor before the typed ``RankDump`` is built.

    ``check`` walks the raw tree once: it refuses odd types and trees past the caps, and masks every distinct
    string (keys too) in reading order, so the Redactor learns the dump's users and hosts. ``text`` is the
    only way the builders (``diagnose.parse.flight_recorder``) read a string: the first mask, swept for values
    learned later in the dump, with host names or users glued on by ``_`` (``step_on_gpu-node-017.cluster``) masked too.
    """

    def __init__(self, redactor: Redactor, limits: ReadLimits) -> None:
        self._redactor = redactor
        self._first: dict[str, str] = {}
        self._final: dict[str, str] = {}
        self._limits = limits

    def _glued(self, masked: str) -> str:
        if "_" not in masked or not _GLUED.search(masked):
            return masked
        for token in re.split(r"[_\s:=,;()\[\]]+", masked):
            if token and "<" not in token and _GLUED.search(token):
                swapped = self._redactor.sweep_known(self._redactor.redact_text(token))
                if swapped != token:
                    masked = masked.replace(token, swapped)
        return masked

    def text(self, value: Any) -> str:
        """The final masked form of a raw string value (other values are turned into text first)."""
        if isinstance(value, bytes | bytearray):
            value = bytes(value).decode("utf-8", "replace")
        value = value if isinstance(value, str) else str(value)
        done = self._final.get(value)
        if done is None:
            first = self._first.get(value)
            if first is None:
                first = self._redactor.redact_text(value)
            done = self._glued(self._redactor.sweep_known(first))
            self._final[value] = done
        return done

    def check(self, obj: Any, name: str) -> None:
        """Refuse odd types and trees past the caps; mask each distinct string once, in reading order."""
        first, redact = self._first, self._redactor.redact_text
        max_nodes, max_depth = self._limits.max_nodes, self._limits.max_depth
        stack: list[tuple[Any, int]] = [(obj, 0)]
        nodes = 0
        while stack:
            item, depth = stack.pop()
            if depth > max_depth:
                raise InputError(f"{name}: the dump is too large or too deeply nested to be a Flight Recorder dump")
            kind = type(item)
            children = item.items() if kind is dict else item if kind is list or kind is tuple else (item,)
            later: list[tuple[Any, int]] = []
            for child in children:
                for value in child if kind is dict else (child,):
                    nodes += 1
                    vkind = type(value)
                    if vkind is str:
                        if value not in first:
                            first[value] = redact(value)
                    elif vkind is dict or vkind is list or vkind is tuple:
                        later.append((value, depth + 1))
                    elif vkind is bytes or vkind is bytearray:
                        text = bytes(value).decode("utf-8", "replace")
                        if text not in first:
                            first[text] = redact(text)
                    elif vkind not in _SCALARS:
                        raise InputError(f"{name}: unexpected {vkind.__name__} value in a Flight Recorder dump")
            if nodes > max_nodes:
                raise InputError(f"{name}: the dump is too large or too deeply nested to be a Flight Recorder dump")
            stack.extend(reversed(later))
