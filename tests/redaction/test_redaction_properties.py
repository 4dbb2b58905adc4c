"""Property tests: random secrets of every provider format planted in realistic log lines."""

from __future__ import annotations

import math
import string

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from redaction import Redactor
from redaction.recognizers.base import shannon_entropy

ALNUM = string.ascii_letters + string.digits
LOWER_ALNUM = string.ascii_lowercase + string.digits
HEX = "0123456789abcdef"
URLSAFE = ALNUM + "_-"
BASE64 = ALNUM + "+/"


def chars(alphabet: str, size: int) -> st.SearchStrategy[str]:
    """Uniformly random text of ``size`` characters from ``alphabet``, as real secrets are.

    Degenerate draws (``aaaa...``, which shrinking heads for) are no secret of any provider;
    every detector here and in gitleaks rejects them on entropy, so they are filtered out.
    """
    floor = min(3.0, math.log2(len(alphabet)) * 0.75)
    return (
        st.randoms(use_true_random=False)
        .map(lambda rng: "".join(rng.choice(alphabet) for _ in range(size)))
        .filter(lambda text: shannon_entropy(text) >= floor)
    )


def provider(prefix: str, alphabet: str, size: int, suffix: str = "") -> st.SearchStrategy[str]:
    """A provider token: a fixed prefix, then random characters."""
    return chars(alphabet, size).map(lambda body: f"{prefix}{body}{suffix}")


# Formats that name themselves: they must go wherever they stand in a line.
SELF_IDENTIFYING = {
    "huggingface": provider("hf_", ALNUM, 34),
    "github classic": st.sampled_from(["ghp_", "gho_", "ghu_", "ghs_", "ghr_"]).flatmap(lambda p: provider(p, ALNUM, 36)),
    "github fine-grained": provider("github_pat_", ALNUM + "_", 82),
    "gitlab": provider("glpat-", URLSAFE, 20),
    "openai project": provider("sk-proj-", URLSAFE, 48),
    "anthropic": provider("sk-ant-api03-", URLSAFE, 93, "AA"),
    "aws access key id": st.sampled_from(["AKIA", "ASIA"]).flatmap(lambda p: provider(p, "ABCDEFGHIJKLMNOPQRSTUVWXYZ234567", 16)),
    "google api key": provider("AIza", URLSAFE, 35),
    "google oauth": provider("ya29.", URLSAFE, 60),
    "slack bot": st.tuples(chars(string.digits, 12), chars(string.digits, 12), chars(ALNUM, 24)).map(
        lambda p: f"xoxb-{p[0]}-{p[1]}-{p[2]}"
    ),
    "slack webhook": st.tuples(chars(string.ascii_uppercase + string.digits, 10), chars(ALNUM, 24)).map(
        lambda p: f"https://hooks.slack.com/services/T{p[0]}/B{p[0]}/{p[1]}"
    ),
    "npm": provider("npm_", LOWER_ALNUM, 36),
    "pypi": provider("pypi-AgEIcHlwaS5vcmc", URLSAFE, 70),
    "stripe": st.sampled_from(["sk_live_", "rk_live_", "sk_test_"]).flatmap(lambda p: provider(p, ALNUM, 24)),
    "digitalocean": provider("dop_v1_", HEX, 64),
    "databricks": provider("dapi", HEX, 32),
    "shopify": provider("shpat_", HEX, 32),
    "linear": provider("lin_api_", ALNUM, 40),
    "pulumi": provider("pul-", HEX, 40),
    "perplexity": provider("pplx-", ALNUM, 48),
    "heroku": provider("HRKU-AA", URLSAFE, 58),
    "grafana service account": st.tuples(chars(ALNUM, 32), chars(HEX, 8)).map(lambda p: f"glsa_{p[0]}_{p[1]}"),
    "age": provider("AGE-SECRET-KEY-1", "QPZRY9X8GF2TVDW0S3JN54KHCE6MUA7L", 58),
    "jwt": st.tuples(chars(URLSAFE, 24), chars(URLSAFE, 40), chars(URLSAFE, 43)).map(
        lambda p: f"eyJhbGciOiJIUzI1NiJ9{p[0]}.eyJzdWIiOiJ1{p[1]}.{p[2]}"
    ),
}

# Formats that only context tells from other hex or base64 (W&B keys, AWS secret keys).
CONTEXTUAL = {
    "wandb": chars(HEX, 40),
    "aws secret access key": chars(BASE64, 40),
    "generic password": chars(ALNUM, 16).filter(lambda s: any(c.isdigit() for c in s) and any(c.isalpha() for c in s)),
}

PREFIXES = st.sampled_from(["", "[rank3]: ", "[default5]:", "node07: ", "[1,3]<stderr>:", "2024-05-01 12:00:03,512 INFO "])

ANYWHERE = [
    "{secret}",
    "+ export API_TOKEN={secret}",
    "Authorization: Bearer {secret}",
    "requests.exceptions.HTTPError: 401 Client Error: Unauthorized (token={secret})",
    "config: {{'api_key': '{secret}', 'project': 'llm-pretrain'}}",
    'env: [{{name: SECRET, value: "{secret}"}}]',
    "Using credentials {secret} for upload to the artifact store",
    "docker run -e TOKEN={secret} -e NCCL_DEBUG=INFO nvcr.io/nvidia/pytorch:24.03-py3",
]

IN_CONTEXT = {
    "wandb": ["WANDB_API_KEY={secret}", "+ wandb login {secret}", "logger: {{wandb: {{api_key: {secret}}}}}"],
    "aws secret access key": ["AWS_SECRET_ACCESS_KEY={secret}", "aws_secret_access_key = {secret}", "secret_key='{secret}'"],
    "generic password": ["DB_PASSWORD={secret}", "password: '{secret}'", "postgresql://ml:{secret}@db.internal:5432/runs"],
}


def leaked(secret: str, masked: str) -> bool:
    """The corpus rule: the secret, or any 12-character run of a 20+ character secret, survives."""
    return secret in masked or (len(secret) >= 20 and any(secret[i : i + 12] in masked for i in range(len(secret) - 11)))


@st.composite
def planted(draw: st.DrawFn) -> tuple[str, str, str]:
    """A realistic log line with one random secret in it: (line, secret, prefix)."""
    if draw(st.booleans()):
        name = draw(st.sampled_from(sorted(SELF_IDENTIFYING)))
        secret = draw(SELF_IDENTIFYING[name])
        template = draw(st.sampled_from(ANYWHERE))
    else:
        name = draw(st.sampled_from(sorted(CONTEXTUAL)))
        secret = draw(CONTEXTUAL[name])
        template = draw(st.sampled_from(IN_CONTEXT[name]))
    prefix = draw(PREFIXES)
    return prefix + template.format(secret=secret), secret, prefix


FAST = settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])


@FAST
@given(planted())
def test_when_a_secret_is_planted_in_a_log_line_then_it_never_survives(case: tuple[str, str, str]) -> None:
    line, secret, _ = case
    masked = Redactor().redact_line(line)
    assert not leaked(secret, masked), masked
    assert "<TOKEN_" in masked or "<PASSWORD_" in masked


@FAST
@given(planted())
def test_when_a_line_is_masked_then_its_rank_prefix_still_reads(case: tuple[str, str, str]) -> None:
    line, _, prefix = case
    masked = Redactor().redact_line(line)
    if prefix.startswith("node07"):
        assert masked.startswith("<HOST_1>: ")
    else:
        assert masked.startswith(prefix)


@FAST
@given(st.lists(planted(), min_size=1, max_size=8))
def test_when_masked_text_is_masked_again_then_nothing_changes(cases: list[tuple[str, str, str]]) -> None:
    text = "\n".join(line for line, _, _ in cases)
    once = Redactor().redact_text(text)
    assert Redactor().redact_text(once) == once
    assert once.count("\n") == text.count("\n")


@FAST
@given(
    step=st.integers(0, 10**7),
    loss=st.floats(0, 20, allow_nan=False),
    lr=st.floats(1e-7, 1e-2),
    rank=st.integers(0, 1023),
    tokens=st.integers(0, 10**7),
    seq=st.integers(0, 10**9),
)
def test_when_a_line_holds_only_training_numbers_then_it_is_unchanged(
    step: int, loss: float, lr: float, rank: int, tokens: int, seq: int
) -> None:
    lines = [
        f"[rank{rank}]: step {step}/500000 | loss {loss:.4f} | lr {lr:.3e} | tokens/s {tokens:,} | mfu 41.2%",
        f"[default{rank % 8}]:{{'loss': {loss:.4f}, 'grad_norm': {loss / 3:.4f}, 'learning_rate': {lr}, 'epoch': {step / 1e5:.2f}}}",
        f"[rank{rank}]:[E ProcessGroupNCCL.cpp:629] [Rank {rank}] Watchdog caught collective operation timeout: "
        f"WorkNCCL(SeqNum={seq}, OpType=ALLREDUCE, NumelIn={tokens}, NumelOut={tokens}, Timeout(ms)=600000)",
        f"RuntimeError: CUDA error: an illegal memory access was encountered (faulting address 0x7f{seq:010x})",
        f"    exitcode  : -9 (pid: {seq})",
    ]
    redactor = Redactor()
    for line in lines:
        assert redactor.redact_line(line) == line


@settings(max_examples=200, deadline=None)
@given(st.text(min_size=0, max_size=400))
def test_when_input_is_arbitrary_text_then_redaction_never_raises_and_keeps_lines(text: str) -> None:
    masked = Redactor().redact_text(text)
    assert masked.count("\n") == text.count("\n")
