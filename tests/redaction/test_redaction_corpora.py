"""Recall and look-alike survival on the shared corpora (gitleaks cases and PII cases).

A true positive counts as leaked if its secret survives, or, for secrets of 20+ characters,
any 12-character run of it does. A look-alike (``fp``) line must come out unchanged. Each
case is redacted in a fresh session, as one block of text.
"""

from __future__ import annotations

from collections import Counter

import pytest

from redaction import Redactor

RECALL_FLOOR = 0.995
SURVIVAL_FLOOR = 0.98


def leaked(secret: str, masked: str) -> bool:
    """Tell whether ``secret`` (or a 12-character run of a long one) is still in ``masked``."""
    if secret in masked:
        return True
    return len(secret) >= 20 and any(secret[i : i + 12] in masked for i in range(len(secret) - 11))


def score(cases: list[dict], text_key: str, group_key: str) -> tuple[float, float, Counter[str]]:
    """Redact each case in a fresh session; return recall, survival and misses by group."""
    tp = missed = fp = changed = 0
    misses: Counter[str] = Counter()
    for case in cases:
        text = case[text_key]
        masked = Redactor().redact_text(text)
        if case["kind"] == "tp":
            tp += 1
            if leaked(case["secret"], masked):
                missed += 1
                misses[case[group_key]] += 1
        else:
            fp += 1
            changed += masked != text
    return 1 - missed / tp, 1 - changed / fp if fp else 1.0, misses


def test_leak_rule_counts_long_runs() -> None:
    secret = "abcdefghijklmnopqrstuvwxyz"
    assert leaked(secret, f"x {secret} y")
    assert leaked(secret, "x ghijklmnopqr y")
    assert not leaked(secret, "x ghijklmnopq y")
    assert not leaked("short", "x <TOKEN_1> y")


def test_when_gitleaks_cases_are_redacted_then_recall_meets_the_floor(load_corpus) -> None:
    cases = load_corpus("gitleaks-cases.jsonl")
    recall, survival, misses = score(cases, "text", "rule")
    print(f"\ngitleaks-cases: recall {recall:.4f}; gitleaks' own negatives unchanged {survival:.4f}; misses {dict(misses)}")
    assert recall >= RECALL_FLOOR


def test_when_pii_cases_are_redacted_then_recall_and_survival_meet_the_floors(load_corpus) -> None:
    cases = load_corpus("pii-cases.jsonl")
    recall, survival, misses = score(cases, "line", "type")
    print(f"\npii-cases: recall {recall:.4f}; look-alikes unchanged {survival:.4f}; misses {dict(misses)}")
    assert recall >= RECALL_FLOOR
    assert survival >= SURVIVAL_FLOOR


def test_the_hyperscan_and_python_prefilters_mask_every_shared_case_alike(load_corpus) -> None:
    """The prefilter only picks candidate lines, so its two engines must agree: Hyperscan reports every match end, Python's
    regexes only non-overlapping ones, and a prefilter pattern spanning lines once made them pick different lines."""
    pytest.importorskip("hyperscan", reason="hyperscan is not installed: only the Python prefilter runs here")
    texts = [case["text"] for case in load_corpus("gitleaks-cases.jsonl")] + [case["line"] for case in load_corpus("pii-cases.jsonl")]
    differ = [
        text[:80] for text in texts if Redactor(use_hyperscan=True).redact_text(text) != Redactor(use_hyperscan=False).redact_text(text)
    ]
    assert differ == []
