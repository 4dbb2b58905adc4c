"""Acceptance on freshly generated secrets, identifying values and harmless lines (see generator.py).

Each run draws new values (the seed is printed; ``REDACTION_SEED=<n>`` replays a run). Every
case is masked as a whole multi-line text by a fresh ``Redactor().redact_text``, as
``diagnose redact`` does. ``pytest -s`` prints the three figures.
"""

from __future__ import annotations

import pytest

from tests.redaction.generator import IDENT_SHAPES, PREFIXES, SECRET_SHAPES, Figures, keep_lines, measure, run_seed

SECRETS_FLOOR = 0.995
IDENTS_FLOOR = 0.98
KEEP_FLOOR = 0.99


@pytest.fixture(scope="module")
def figures() -> Figures:
    seed = run_seed()
    result = measure(seed)
    print(
        f"\ngenerated (seed {seed}): secrets masked {result.secrets:.4f}, identifying values masked {result.idents:.4f}, "
        f"keep lines unchanged {result.keep:.4f}"
    )
    for kind, shape, masked in result.misses[:20]:
        print(f"  miss [{kind}] {shape}: {masked!r}"[:400])
    return result


def test_the_generator_covers_the_shapes_and_prefixes_it_promises() -> None:
    import random

    assert len(SECRET_SHAPES) >= 40
    assert len(PREFIXES) >= 8
    assert len(IDENT_SHAPES) >= 15
    assert len(keep_lines(random.Random(0), PREFIXES)) >= 400


def test_when_generated_secrets_are_redacted_then_almost_all_are_masked(figures: Figures) -> None:
    assert figures.secrets >= SECRETS_FLOOR


def test_when_generated_identifying_values_are_redacted_then_almost_all_are_masked(figures: Figures) -> None:
    assert figures.idents >= IDENTS_FLOOR


def test_when_harmless_lines_are_redacted_then_almost_all_come_through_unchanged(figures: Figures) -> None:
    assert figures.keep >= KEEP_FLOOR
