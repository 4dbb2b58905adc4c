"""The streaming contract: lines, blocks and chunks agree; PEM blocks span calls; odd input is safe."""

from __future__ import annotations

import re
import time
from pathlib import Path

import pytest

from redaction import Redactor
from redaction.readahead import redact_ahead
from redaction.recognizers.line_prefix import LinePrefixRecognizer

LOG = """\
[2024-05-01 12:00:00,001] torch.distributed.run: WARNING: Setting OMP_NUM_THREADS environment variable
+ export MASTER_ADDR=gpu-node-017.cluster.internal
node07: [rank3]: {'loss': 2.3451, 'grad_norm': 0.8812}
node08: [rank12]: RuntimeError: NCCL error
WANDB_API_KEY=3cdacfc8448fb67eb5ef08bab1da3fd7bd099b9b
-----BEGIN OPENSSH PRIVATE KEY-----
b3BlbnNzaC1rZXktdjEAAAAABG5vbmUAAAAEbm9uZQAAAAAAAAABAAAAMwAAAAtzc2gtZW
QyNTUxOQAAACCoTKpMvDoe2Tcw/l4M0e1jAFbnl4KNdDH/yCrD2s6WtgAAAJgb3SCTG90g
-----END OPENSSH PRIVATE KEY-----
  File "/home/alice/projects/llm/train.py", line 211, in <module>
Saving checkpoint to s3://acme-ml-private-ckpts/llama-7b/step_12000/
node07: done"""

EXPECTED = """\
[2024-05-01 12:00:00,001] torch.distributed.run: WARNING: Setting OMP_NUM_THREADS environment variable
+ export MASTER_ADDR=<HOST_1>
<HOST_2>: [rank3]: {'loss': 2.3451, 'grad_norm': 0.8812}
<HOST_3>: [rank12]: RuntimeError: NCCL error
WANDB_API_KEY=<TOKEN_1>
<PRIVATE_KEY_1>
<PRIVATE_KEY_1>
<PRIVATE_KEY_1>
<PRIVATE_KEY_1>
  File "/home/<USER_1>/projects/llm/train.py", line 211, in <module>
Saving checkpoint to s3://<BUCKET_1>/llama-7b/step_12000/
<HOST_2>: done"""


def test_when_a_log_is_masked_as_one_block_then_every_type_is_masked_in_place() -> None:
    assert Redactor().redact_text(LOG) == EXPECTED


def test_when_the_log_is_fed_line_by_line_then_the_result_is_the_same() -> None:
    redactor = Redactor()
    assert "\n".join(redactor.redact_line(line) for line in LOG.split("\n")) == EXPECTED


def test_when_the_log_is_streamed_with_newlines_then_one_line_comes_out_per_line() -> None:
    lines = [line + "\n" for line in LOG.split("\n")]
    assert list(Redactor().redact_lines(lines)) == EXPECTED.split("\n")


@pytest.mark.parametrize("cut", range(1, 12))
def test_when_the_log_is_cut_into_two_chunks_anywhere_then_the_result_is_the_same(cut: int) -> None:
    lines = LOG.split("\n")
    redactor = Redactor()
    masked = [redactor.redact_text("\n".join(lines[:cut])), redactor.redact_text("\n".join(lines[cut:]))]
    assert "\n".join(masked) == EXPECTED
    assert redactor.counts["PRIVATE_KEY"] == 1


def test_when_a_private_key_never_ends_then_masking_stops_at_the_first_non_key_line() -> None:
    text = "-----BEGIN RSA PRIVATE KEY-----\nMIIEowIBAAKCAQEAx4vK\nTraceback (most recent call last):\nloss 2.31"
    assert Redactor().redact_text(text) == "<PRIVATE_KEY_1>\n<PRIVATE_KEY_1>\nTraceback (most recent call last):\nloss 2.31"


def test_when_a_private_key_is_on_one_line_then_the_rest_of_the_line_is_masked() -> None:
    line = "key: -----BEGIN OPENSSH PRIVATE KEY----- nKtbgHdrensUi59BAj34lMUvB7hl5Vh5o8s6tXgecbHJij1lM5CZSLmAqfVFZ+Io"
    assert Redactor().redact_line(line) == "key: <PRIVATE_KEY_1>"


def test_when_key_lines_carry_a_launcher_prefix_then_the_prefix_stays() -> None:
    text = "node07: -----BEGIN PRIVATE KEY-----\nnode07: MIIEvQIBADANBgkqhkiG9w0BAQEFAASC\nnode07: -----END PRIVATE KEY-----"
    assert Redactor().redact_text(text) == "<HOST_1>: <PRIVATE_KEY_1>\n<HOST_1>: <PRIVATE_KEY_1>\n<HOST_1>: <PRIVATE_KEY_1>"


def test_when_hyperscan_is_not_used_then_the_fallback_masks_the_same() -> None:
    assert Redactor(use_hyperscan=False).redact_text(LOG) == EXPECTED


def test_when_a_line_is_huge_then_it_is_masked_quickly_and_fully() -> None:
    filler = "x=1, " * 400_000
    line = f"{filler}token=abc123XYZ789secret {filler}MASTER_ADDR=10.1.2.3 {filler}"
    start = time.perf_counter()
    masked = Redactor().redact_line(line)
    assert time.perf_counter() - start < 10
    assert "abc123XYZ789secret" not in masked
    assert "10.1.2.3" not in masked
    assert len(masked) < len(line)


@pytest.mark.parametrize(
    "text",
    [
        "",
        "\n\n\n",
        "\x00\x01\x02token=\x1b[31mabc123XYZ789secret\x1b[0m\r",
        "x\udcff token=\udcfeabc123XYZ789 /home/bob/x",
        "é" * 10_000 + " alice@example.com " + "\u2028" * 10,
        "<" * 5000 + "HOST_1>" + ">" * 5000,
    ],
)
def test_when_input_is_odd_then_redaction_does_not_raise_and_keeps_every_line(text: str) -> None:
    masked = Redactor().redact_text(text)
    assert masked.count("\n") == text.count("\n")


def test_when_a_chunk_holds_nothing_to_mask_then_it_comes_back_as_is() -> None:
    text = "\n".join(f"[rank{i % 8}]: step {i} | loss {2 + i / 1000:.4f}" for i in range(10_000))
    redactor = Redactor()
    assert redactor.redact_text(text) is text
    assert redactor.counts == {}


@pytest.mark.parametrize("cut", [1, 3, 6, 11])
def test_when_the_next_block_is_scanned_ahead_on_another_thread_then_the_result_is_the_same(cut: int) -> None:
    lines = LOG.split("\n")
    blocks = ["\n".join(lines[:cut]), "\n".join(lines[cut:])]
    assert "\n".join(redact_ahead(Redactor(), iter(blocks))) == EXPECTED


def _shipped_log_lines() -> list[str]:
    root = Path(__file__).resolve().parents[2]
    files = [*root.glob("evals/cases/*/log.txt"), *root.glob("evals/cases/*/logs/**/*.log"), *root.glob("examples/*.log")]
    return [line for path in sorted(files) for line in path.read_text(encoding="utf-8", errors="replace").split("\n")]


def test_every_line_whose_launcher_prefix_is_masked_is_one_the_block_prefilter_finds() -> None:
    """The prefilter's one pass decides whether a block gets the launcher-prefix pass: it must miss no such line."""
    recognizer = LinePrefixRecognizer()
    block_prefilter = re.compile(LinePrefixRecognizer.BLOCK_PREFILTER.encode(), re.MULTILINE)
    lines = [line.encode() for line in _shipped_log_lines()]
    # repeated digit-less prefixes count only when they start several lines: feed each line five times
    changed = [line for line in lines if recognizer.sub_block(b"\n".join([line] * 5), lambda value: b"<HOST>") != b"\n".join([line] * 5)]
    assert len(changed) > 50  # the shipped logs hold many launcher prefixes
    assert [line for line in changed if not block_prefilter.search(line)] == []


def test_a_block_with_no_launcher_prefix_is_masked_the_same_without_the_prefix_pass() -> None:
    text = "\n".join(f"[rank{r}]:[I1202 10:00:01.036001 train.py:220] step 1 | loss 2.49 | on host gpu-node-{r:03d}" for r in range(64))
    redactor = Redactor()
    prescan = redactor.prescan(text, redactor.new_scratch())
    assert not prescan.scan.block_lines
    forced = prescan._replace(scan=prescan.scan._replace(block_lines=True))
    masked = redactor.redact_text(prescan)
    assert masked == Redactor().redact_text(forced)
    assert "gpu-node-" not in masked
