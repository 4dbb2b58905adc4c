"""Make a model's text safe to show: no terminal control sequences, no shell pipes, no destructive commands.

Everything a model wrote passes through here before a terminal or a web page shows it:
``clean_text`` strips ANSI/OSC/DCS escape sequences, C0/C1 control characters (newline and tab
kept) and bidirectional overrides; ``command_risk`` names why a command must never be shown
(it pipes into a shell, or destroys data); ``label_command`` marks a command that is not from the
encyclopedia as unverified. ``StreamCleaner`` does the same to a stream of pieces, holding back a
line only while it might still turn out to be a command.
"""

from __future__ import annotations

import re

from diagnose.schema import Diagnosis

UNVERIFIED = "unverified, from the model"
"""The label on every model-suggested command that is not an encyclopedia entry's own."""

_ESCAPE = re.compile(
    r"\x1b\][^\x07\x1b]*(?:\x07|\x1b\\)?"  # OSC ... BEL or ST (window title, hyperlinks)
    r"|\x1b[PX^_][^\x1b]*(?:\x1b\\)?"  # DCS, SOS, PM, APC ... ST
    r"|\x1b\[[0-?]*[ -/]*[@-~]?"  # CSI (colours, cursor moves, clear screen)
    r"|\x9b[0-?]*[ -/]*[@-~]?"  # 8-bit CSI
    r"|\x9d[^\x07\x9c]*[\x07\x9c]?"  # 8-bit OSC
    r"|\x1b[ -/]*[0-~]?"  # any other escape (charset switches, RIS)
)
_CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f\u200b-\u200f\u202a-\u202e\u2066-\u2069\ufeff]")
_SHELL_PIPE = re.compile(
    r"\|\s*(?:sudo\s+)?(?:env\s+\S+\s+)?(?:/\S*/)?(?:ba|z|k|c|tc|da|fi|a)?sh\b"
    r"|\|\s*(?:sudo\s+)?(?:python[0-9.]*|perl|ruby|node|php)\b(?:\s+-\s*)?$"
    r"|\b(?:ba|z|da)?sh\s+-c\s+[\"']?\$\((?:curl|wget)"
    r"|\b(?:ba|z|da)?sh\s+<\(\s*(?:curl|wget)"
    r"|\beval\s+[\"']?\$\((?:curl|wget)",
    re.I,
)
_DESTRUCTIVE = re.compile(
    r"\brm\s+(?:-[a-zA-Z]*[rRf][a-zA-Z]*\s+|--recursive\s+|--force\s+)+"
    r"|\bmkfs(?:\.\w+)?\b|\bdd\s+[^|]*\bof=/dev/|>\s*/dev/(?:sd|nvme|hd|xvd)"
    r"|\bshred\b|\bwipefs\b|:\(\)\s*\{\s*:\|:&\s*\};:"
    r"|\bchmod\s+-R\s+[0-7]*7\s+/|\bchown\s+-R\s+\S+\s+/(?:\s|$)"
    r"|\bgit\s+(?:reset\s+--hard|clean\s+-[a-z]*f|push\s+[^|]*--force)"
    r"|\bfind\b[^|]*\s-delete\b|\btruncate\s+-s\s*0\b"
    r"|(?:^|[;&|`$(]\s*|\bsudo\s+)(?:shutdown|reboot|halt|poweroff|killall|pkill)\b|\bkill\s+-9\s+-1\b"
    r"|\bDROP\s+(?:TABLE|DATABASE)\b",
    re.I,
)
_SUSPECT = re.compile(
    r"\||\brm\b|\bdd\b|mkfs|shred|wipefs|chmod|chown|\bgit\b|\bfind\b|truncate|shutdown|reboot|halt|"
    r"poweroff|kill|\beval\b|\bsh\b|bash|curl|wget|DROP|:\(\)|>\s*/dev|```|^\s*\$\s|^\s*<|^\s*\S+:\d",
    re.I,
)
_HOLD_CHARS = 2000
_ECHO = re.compile(r"^(?:</?(?:l(?:o(?:g>?)?)?)?|\[?\d*\]? ?\S+:\d+ \| rank \S+ \| .*)$")
"""A line of the prompt's quoted log block, repeated by a model instead of an answer."""


def clean_text(text: str) -> str:
    """A model's text with every terminal control sequence and control character removed (newlines and tabs kept)."""
    return _CONTROL.sub("", _ESCAPE.sub("", text.replace("\r\n", "\n")))


def command_risk(command: str) -> str | None:
    """Why a command must not be shown ('pipes into a shell', 'destructive'), or None when it may be shown labeled."""
    if _SHELL_PIPE.search(command):
        return "pipes into a shell"
    if _DESTRUCTIVE.search(command):
        return "destructive"
    return None


def label_command(command: str) -> str:
    """A model-suggested command as shown: cleaned, with the unverified label as an inert shell comment."""
    return f"{clean_text(command).strip()}  # {UNVERIFIED}"


MAX_COMMAND_CHARS = 300
"""A longer "command" is a model running on, not a command."""
_ASSIGNMENT = r"[A-Za-z_][A-Za-z0-9_]*=(?:\"[^\"]*\"|'[^']*'|[^\s\"']*)"
_COMMAND = re.compile(
    rf"(?:{_ASSIGNMENT}\s+)*"  # NCCL_DEBUG=INFO ... before the command word
    r"(?:\.{1,2}/|~/|/)?[A-Za-z_][\w.+-]*(?:/[\w.+-]+)*(?:\s|$)"  # a command word: nvidia-smi, ./run.sh, /usr/bin/env
    rf"|(?:{_ASSIGNMENT}\s*)+$"  # only settings: NCCL_P2P_DISABLE=1
)
_PLACEHOLDER = re.compile(r"<[a-z][a-z0-9_,.-]*(?:\s+[a-z0-9_,.-]+)+>", re.I)
"""A template's placeholder (``<shell command>``, ``<one candidate id, or unknown>``); the log's ``<HOST_3>`` has no space."""
_PROSE = re.compile(r"(?<=[A-Za-z0-9)\]])[.!?]$")
"""A sentence: it ends with a full stop after a word (``ls .`` and ``cd ..`` do not)."""
_NOT_COMMANDS = {"none", "null", "n/a", "na", "unknown", "nothing", "true", "false", "yes", "no", "todo", "tbd"}


def looks_like_command(command: str) -> bool:
    """True when a model's "command" reads as a shell command line, not junk a small model put in the field.

    A command starts with a command word (a letter, ``./``, ``/``, ``~/``), possibly after ``NAME=value``
    settings; a bare number (``139``, ``1.0``), punctuation (``,``), a template placeholder copied from the
    prompt (``<shell command>``), a sentence ending in a full stop (``Check the GPU.``), a filler word (``none``) or an over-long
    text is not one.
    """
    command = command.strip()
    if not 2 <= len(command) <= MAX_COMMAND_CHARS or command.lower() in _NOT_COMMANDS:
        return False
    return bool(_COMMAND.match(command)) and not _PLACEHOLDER.search(command) and not _PROSE.search(command)


def _unwrap(command: str) -> str:
    """A command without a shell prompt (``$ ``) or the inline-code backticks around it."""
    command = command.strip()
    if len(command) > 2 and command[0] == command[-1] == "`" and "`" not in command[1:-1]:
        command = command[1:-1].strip()
    return command[2:].strip() if command.startswith("$ ") else command


def model_commands(commands: list[str], known: set[str]) -> tuple[list[str], list[str]]:
    """(commands to show labeled as unverified, why others were dropped) for a model's suggestions.

    Control sequences are stripped, and a shell prompt or backticks around a command; text that does not
    look like a command (:func:`looks_like_command`) is left out silently; a command that is one of
    ``known`` (the entry's own) is left out, it is shown already; one that pipes into a shell or destroys
    data is dropped and never quoted.
    """
    shown: list[str] = []
    dropped: list[str] = []
    for raw in commands:
        command = _unwrap(" ".join(clean_text(raw).split()))
        if not looks_like_command(command) or command in known or command in shown:
            continue
        risk = command_risk(command)
        if risk is not None:
            dropped.append(f"a model-suggested command was dropped ({risk})")
        else:
            shown.append(command)
    return shown, dropped


def clean_line(line: str, known: set[str], fenced: bool) -> tuple[str, bool]:
    """One complete line of a model's prose: (as shown, whether a command was removed from it).

    A risky command is replaced by a notice; a command line (inside a code fence, or ``$ ...``)
    that is not one of ``known`` is labeled unverified.
    """
    text = clean_text(line)
    body = text.strip()
    risk = command_risk(body)
    if risk is not None:
        return f"[a model-suggested command was removed: {risk}]", True
    command = body[1:].strip() if body.startswith("$ ") else body if fenced and not body.startswith("```") else ""
    if command and command not in known and UNVERIFIED not in command:
        return text.replace(command, label_command(command), 1), False
    return text, False


class StreamCleaner:
    """Clean a model's streamed text piece by piece: control sequences stripped, risky commands removed.

    Prose is passed on as it comes; a line that might be a command (it holds a pipe, ``rm``, a code
    fence ...) is held until it is complete, then checked whole. ``removed`` counts removed commands,
    ``echoed`` the lines of the prompt's quoted log a model repeated (dropped).
    """

    def __init__(self, known: set[str] | None = None) -> None:
        self.known = known or set()
        self.removed = 0
        self.echoed = 0
        self._line = ""
        self._sent = 0
        self._fenced = False

    def feed(self, piece: str) -> str:
        """The text that can be shown now."""
        self._line += piece
        out: list[str] = []
        while "\n" in self._line:
            line, self._line = self._line.split("\n", 1)
            shown = self._finish(line)
            if shown is not None:
                out.append(shown + "\n")
        if (
            self._line
            and not _SUSPECT.search(clean_text(self._line))
            and "\x1b" not in self._line[-64:]
            and "\x9b" not in self._line[-64:]
            and not self._fenced
            and len(self._line) < _HOLD_CHARS
        ):
            text = clean_text(self._line)
            out.append(text[self._sent :])
            self._sent = len(text)
        return "".join(out)

    def flush(self) -> str:
        """The rest, at the end of the stream."""
        rest, self._line = self._finish(self._line), ""
        return rest or ""

    def _finish(self, line: str) -> str | None:
        if _ECHO.match(clean_text(line).strip()):
            self.echoed += 1
            self._sent = 0
            return None
        shown, removed = clean_line(line, self.known, self._fenced)
        self.removed += removed
        if line.strip().startswith("```"):
            self._fenced = not self._fenced
        sent, self._sent = self._sent, 0
        return ("\n" if sent else "") + shown if removed else shown[sent:]


def clean_diagnosis(diagnosis: Diagnosis) -> Diagnosis:
    """A diagnosis with every text field a model may have touched cleaned of control sequences (for any page or terminal)."""
    return diagnosis.model_copy(
        update={
            "mechanism": clean_text(diagnosis.mechanism),
            "model_explanation": clean_text(diagnosis.model_explanation) if diagnosis.model_explanation else None,
            "notes": [clean_text(note) for note in diagnosis.notes],
            "fix": [clean_text(step) for step in diagnosis.fix],
            "verify": [clean_text(command) for command in diagnosis.verify],
            "evidence": [e.model_copy(update={"text": clean_text(e.text)}) for e in diagnosis.evidence],
            "backend": clean_text(diagnosis.backend),
        }
    )
