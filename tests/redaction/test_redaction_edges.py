"""Inputs at the edges: tokens longer than Hyperscan's literal limit, very long lines of one shape.

The long-line tests bound work, not seconds: each runs under a generous ``signal.alarm``
(60 s) that only fires if matching turns super-linear again (a 180 KB line of hyphens and
digits took over two minutes with the old node-name regex, whose nested repeats backtracked).
"""

from __future__ import annotations

import random
import signal
import string
from collections.abc import Iterator

import pytest

from redaction import Redactor

LONG = 20_000


def _token(rng: random.Random, n: int) -> str:
    return "".join(rng.choice(string.ascii_letters + string.digits) for _ in range(n))


@pytest.fixture
def alarm() -> Iterator[None]:
    """Fail (instead of hanging) if the test runs for more than a minute."""

    def expire(signum: int, frame: object) -> None:
        raise TimeoutError("redaction did not finish within 60 s: super-linear matching?")

    previous = signal.signal(signal.SIGALRM, expire)
    signal.alarm(60)
    yield
    signal.alarm(0)
    signal.signal(signal.SIGALRM, previous)


# Without Hyperscan the ~270 prefilter regexes run in Python (seconds on 20 KB): one case is enough.
@pytest.mark.parametrize(
    ("template", "use_hyperscan"),
    [
        ("token={v}", True),
        ("Authorization: Bearer {v}", True),
        ("MASTER_ADDR=node-{v}", True),
        ("KAGGLE_KEY={v}\nagain {v}", True),
        ("token={v}", False),
    ],
)
def test_when_a_value_is_longer_than_16_kb_then_nothing_crashes_and_it_is_masked(template: str, use_hyperscan: bool) -> None:
    value = _token(random.Random(1), LONG)
    redactor = Redactor(use_hyperscan=use_hyperscan)
    masked = redactor.redact_text(template.format(v=value))
    assert value not in masked
    known = "node-" + value if template.startswith("MASTER_ADDR") else value
    assert value not in redactor.sweep_known(f"later {known}")


@pytest.mark.parametrize(
    "line",
    [
        "".join(random.Random(2).choice("-0123456789") for _ in range(180_000)),
        "ip-" + "1-" * 90_000,
        "ip-" + "12-3-" * 36_000,
        "on node-" + "1-" * 90_000 + " x",
        "a" + "-1" * 90_000 + ": task 1",
        "node-1" + "-1" * 90_000 + ":x",
        "a." * 90_000,
        "x@" + "a-" * 90_000,
        "[" + "a-" * 90_000,
        "KEY=" + "a_" * 90_000,
    ],
    ids=["hyphen-digit", "ec2-like", "ec2-groups", "preposition", "srun-task", "prefix-no-space", "dots", "email", "bracket", "key"],
)
def test_when_a_180_kb_line_repeats_one_shape_then_masking_completes(line: str, alarm: None) -> None:
    masked = Redactor().redact_text(line + "\nstep 1 loss 2.0")
    assert masked.endswith("\nstep 1 loss 2.0")
