"""What ended the process, and what it survived; what a person's stop explains.

A failure line that the process lived past is not what killed it: an exception in an earlier traceback
of the same rank, followed by a later one (a retried or handled error); a Python warning (``file.py:12:
UserWarning: ...``), which by construction does not raise; a line a logger wrote at WARNING level; a line
followed closely by the library saying it falls back or retries. When some initiating finding sits in the
exception that ended its process (the last exception of its rank: its whole chain and the message lines of its
exception line, see ``diagnose.engine.chains``), such survived findings must not outrank it, whatever their order.
An exception that no rank printed, before any rank printed anything in its file (a batch script's helper command
failing, ``wandb`` that cannot import), is one the run lived past when its ranks then failed on their own.

A person's stop ends the run (``DELIBERATE``: Ctrl-C, ``KeyboardInterrupt``, torchrun's "Received 2 death signal",
SIGINT forwarded to workers). The generic kill and abort lines after it are its consequence: workers SIGKILLed
after the grace period (exit -9, "forcefully exiting via 9", ``Killed``), DataLoader workers killed, a segfault or
an abort during teardown, peers losing their connection. Such findings are not root causes (``explained_by_stop``);
a failure before the stop still is, and so is a later line that names its failure exactly (a signature of weight
``EXACT`` or more: an inplace-autograd error, a CUDA OOM), which a stop does not produce (a save on interrupt that
fails, the next run in the same file). "After" is proven by the same file's line order, or across files by
timestamps at least ``CLOCK_TOLERANCE`` apart (per-rank files without timestamps prove nothing).
"""

from __future__ import annotations

import re

from diagnose.engine.chains import EXCEPTION_LINE, exceptions
from diagnose.parse.events import LAUNCHER_EXCEPTION
from diagnose.parse.parsed_log import ParsedLog
from diagnose.parse.prefixes import body_of, split_prefix
from diagnose.schema import Finding, LogLine

PYTHON_WARNING = re.compile(r"\.py:\d+: (?:\w+\.)*\w*Warning:")
"""The ``warnings`` module's format: what it reports did not raise."""
LOGGED_WARNING = re.compile(r"\[WARNING\]|^\s*WARNING:(?:[\w.]*:|\s)| - WARNING - |(?:^|\]:)\[?W\d{3,4} \d\d:\d\d:\d\d")
"""Python ``logging`` at WARNING level (DeepSpeed's ``[WARNING]``, the default ``WARNING:name:``, `` - WARNING - ``), a
plain ``WARNING: ...`` line (Horovod's stall inspector)
or glog/c10 at W (``[W204 07:30:03 socket.cpp:752]``): the program logged it and went on."""
RECOVERED = re.compile(
    r"\bfall(?:ing)?[ -]?back\b|\bfalls back\b|\bwill (?:be )?retr(?:y|ied)\b|\bretrying\b|\bRetry(?:ing)? in\b"
    r"|\bcontinuing without\b|\bskipping (?:it|this)\b|\btrying to resume\b",
    re.I,
)
"""The library saying the error was handled."""
RECORD_HEAD = re.compile(
    r"^\[?(?:\d{4}-\d\d-\d\d[ T]\d\d:\d\d:\d\d|[IWEF]\d{3,4} \d\d:\d\d:\d\d)|^(?:DEBUG|INFO|WARNING|ERROR|CRITICAL)[:\s]"
)
"""A line that starts a log record (a date and time, a glog header, a level word); the lines after it continue it."""
WARNING_SPAN = 10
"""How far back a continuation line may look for the head of its log record."""
NESTED_TRACEBACK = "Traceback (most recent call last)"
RECOVERY_WINDOW = 3
"""How many following lines of the same file may say the error was handled."""
CPP_BACKTRACE = re.compile(r"^\s*(?:Exception raised from \S+ at \S+ \(most recent call first\):|frame #\d+: |<omitting python frames>)")
"""The C++ backtrace that c10's ``what()`` carries: part of the message it follows (a warning that prints the error it
retries on prints this too), not a line of its own."""
CLOCK_TOLERANCE = 2.0
"""Timestamps closer than this do not order two lines (hosts' clocks drift, output is buffered)."""
DELIBERATE = frozenset({"user-interrupt"})
"""Entries whose lines are a person's decision to stop the run, not a failure: never named on their own."""
EXACT = 0.9
"""A signature this specific names its failure exactly (kb/README.md: 0.95 names it, 0.5 is generic): no stop explains it."""
SLURM_CANCELLED = re.compile(r"\*\*\* (JOB|STEP) \S+ (?:ON \S+ )?CANCELLED AT (\S+) (?:DUE to SIGNAL \w+ )?\*\*\*")
"""slurmstepd's line for a job or step cancelled by a signal, not for a reason (src/slurmd/slurmstepd/req.c)."""
SRUN_ABORTED = re.compile(r"srun: Job step aborted: Waiting up to \d+ seconds for job step to finish")
"""srun's line when its step is being killed, for whatever reason."""


def _in_warning_record(log: ParsedLog, line: LogLine) -> bool:
    """True when the line continues a multi-line log record written at WARNING level (mmcv's "The model and loaded
    state dict do not match exactly" followed by its ``size mismatch for ...`` lines), not an exception."""
    own = body_of(line.text).strip()
    if EXCEPTION_LINE.match(own) or RECORD_HEAD.match(own):
        return False  # an exception, or a record of its own (its level, not an earlier record's, decides)
    for step in range(1, WARNING_SPAN + 1):
        text = log.line_text(line.source, line.line - step)
        if text is None:
            return False
        body = body_of(text).strip()
        if NESTED_TRACEBACK in body or EXCEPTION_LINE.match(body):
            return False
        if RECORD_HEAD.match(body):
            return bool(LOGGED_WARNING.search(text) or LOGGED_WARNING.search(body))
    return False


def recovered(log: ParsedLog, finding: Finding) -> bool:
    """True when the finding is a warning (or continues one) or the library says, right after it, that it retried or fell back."""
    line = finding.evidence
    body = body_of(line.text)  # after a launcher's or kubectl's prefix, where a record's level is anchored
    if PYTHON_WARNING.search(line.text) or LOGGED_WARNING.search(line.text) or LOGGED_WARNING.search(body):
        return True
    if _in_warning_record(log, line):
        return True
    following = (log.line_text(line.source, line.line + step) for step in range(0, RECOVERY_WINDOW + 1))
    return any(text is not None and RECOVERED.search(text) for text in following)


def ends_retrying(log: ParsedLog, finding: Finding) -> bool:
    """True when the file ends on the finding's failure: after it come only blank lines, lines of the same entry (the
    store connection still being retried when the output stops) and the C++ backtrace such a line's error carries.
    Unknown (False) when the file was not kept whole."""
    kept = log.lines.get(finding.evidence.source)
    if kept is None:
        return False
    same = {f.evidence.line for f in log.findings if f.entry_id == finding.entry_id and f.evidence.source == finding.evidence.source}
    after = enumerate(kept[finding.evidence.line :], finding.evidence.line + 1)
    # kubectl stamps blank lines too
    return all(not body_of(text).strip() or number in same or CPP_BACKTRACE.match(body_of(text)) for number, text in after)


def fatal_and_survived(log: ParsedLog, findings: list[Finding]) -> tuple[list[Finding], list[Finding]]:
    """(findings in the exception that ended their process, findings their process lived past)."""
    raised = exceptions(log)
    fatal: list[Finding] = []
    survived: list[Finding] = []
    for finding in findings:
        stream = raised.get((finding.evidence.source, finding.rank)) or raised.get((finding.evidence.source, None)) or []
        # a launcher's report of its workers (ChildFailedError) in the same stream is not the process living on: with
        # srun's task prefix the agent's output on node 0 carries "rank" 0 too
        stream = [exception for exception in stream if not LAUNCHER_EXCEPTION.search(exception.events[-1].anchor.text)]
        holding = [i for i, exception in enumerate(stream) if exception.holds(finding)]
        if holding and holding[-1] == len(stream) - 1:
            fatal.append(finding)
        elif holding or recovered(log, finding):
            survived.append(finding)
    return fatal, survived


def before_the_run(log: ParsedLog, fatal: list[Finding], findings: list[Finding]) -> list[Finding]:
    """The ``fatal`` findings no rank printed, above the first line any rank printed in their file, when ranks' own
    ``findings`` follow: an exception the run started after (a batch script's helper command), not the one that ended it.
    """
    if not any(f.rank is not None for f in findings):
        return []
    return [f for f in fatal if f.rank is None and f.evidence.line < _first_ranked_line(log, f.evidence.source)]


def _first_ranked_line(log: ParsedLog, source: str) -> int:
    """The first line of ``source`` a rank printed: a launcher's prefix on a kept line, a ranked event or finding."""
    ranked = [e.lines[0].line for e in log.events if e.rank is not None and e.lines[0].source == source]
    ranked += [f.evidence.line for f in log.findings if f.rank is not None and f.evidence.source == source]
    prefixed = next((number for number, text in enumerate(log.lines.get(source, []), 1) if split_prefix(text)[0] is not None), None)
    return min([*ranked, *([prefixed] if prefixed is not None else [])], default=0)


def stops(log: ParsedLog) -> list[LogLine]:
    """The lines where a person stopped the run (the deliberate entries' findings), in reading order."""
    return sorted((f.evidence for f in log.findings if f.entry_id in DELIBERATE), key=lambda line: (line.source, line.line))


def echoes_stop(line: LogLine, stopped: list[LogLine]) -> bool:
    """True when ``line`` is Slurm reporting the same cancel as a stop line: ``scancel`` of a job makes srun print
    "Job step aborted" and slurmstepd print the step's cancel with the job's ``CANCELLED AT`` instant, in any order
    around the job's own line. (A step srun kills after a task failed has no job cancel beside it.)"""
    jobs = {m.group(2) for stop in stopped if (m := SLURM_CANCELLED.search(stop.text)) and m.group(1) == "JOB"}
    if not jobs:
        return False
    step = SLURM_CANCELLED.search(line.text)
    return bool(SRUN_ABORTED.search(line.text)) or (step is not None and step.group(2) in jobs)


def after_stop(line: LogLine, stopped: list[LogLine]) -> bool:
    """True when ``line`` is proven to come after one of the ``stopped`` lines: later in the same file, or, in another
    file, later in time by at least CLOCK_TOLERANCE."""
    for stop in stopped:
        if stop.source == line.source:
            if stop.line < line.line:
                return True
        elif stop.timestamp is not None and line.timestamp is not None and line.timestamp - stop.timestamp >= CLOCK_TOLERANCE:
            return True
    return False


def explained_by_stop(finding: Finding, stopped: list[LogLine]) -> bool:
    """True when a person's stop explains the finding: a generic line (below ``EXACT``) proven to come after the stop."""
    return finding.weight < EXACT and after_stop(finding.evidence, stopped)
