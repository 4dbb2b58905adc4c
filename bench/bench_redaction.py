"""Benchmark redaction throughput against plain reading of the same file.

Generates a realistic distributed-training log (torchrun rank prefixes, step metrics,
progress bars, NCCL INFO lines, torchelastic warnings, tracebacks, a few secrets) into a
temporary directory, then reports MB/s for reading it and for masking it the way the
product's reader does: ~1 MB chunks cut at newlines, in order, on one Redactor.

    python bench/bench_redaction.py --size-mb 200
    python bench/bench_redaction.py --size-mb 50 --launcher-prefix   # pdsh "node07: " on every line
    python bench/bench_redaction.py --generated [--seed N]           # masking figures on fresh secrets

``--generated`` prints the acceptance figures of ``tests/redaction/generator.py``: the share of
freshly generated secrets masked, of identifying values masked, and of harmless lines kept.
"""

from __future__ import annotations

import argparse
import random
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from redaction import Redactor

CHUNK = 1 << 20

_SECRETS = (
    "export HF_TOKEN=hf_{a34}",
    "WANDB_API_KEY={h40}",
    "Authorization: Bearer {a40}",
    "MLFLOW_TRACKING_URI=postgresql://ml_user:{a12}@10.0.5.{n}:5432/tracking",
    "AWS_ACCESS_KEY_ID=AKIA{A16}",
    "Saving checkpoint to s3://acme-{l8}-ckpts/llama-7b/step_{n}/",
    '  File "/home/{l6}/projects/llm/train.py", line {n}, in <module>',
    "+ export MASTER_ADDR=gpu-node-{n}.cluster.internal",
)


def _fill(template: str, rng: random.Random) -> str:
    """Fill a secret template with random characters of the right classes."""
    alnum = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789"
    return template.format(
        a34="".join(rng.choices(alnum, k=34)),
        a40="".join(rng.choices(alnum, k=40)),
        a12="".join(rng.choices(alnum, k=12)),
        h40="".join(rng.choices("0123456789abcdef", k=40)),
        A16="".join(rng.choices("ABCDEFGHIJKLMNOPQRSTUVWXYZ234567", k=16)),
        l8="".join(rng.choices("abcdefghijklmnopqrstuvwxyz", k=8)),
        l6="".join(rng.choices("abcdefghijklmnopqrstuvwxyz", k=6)),
        n=rng.randint(1, 250),
    )


def log_lines(rng: random.Random, *, launcher_prefix: bool) -> Iterator[str]:
    """Yield an endless, realistic torchrun training log."""
    step = 0
    while True:
        step += 1
        rank = rng.randrange(64)
        prefix = f"node{rank // 8:02d}: " if launcher_prefix else ""
        kind = rng.random()
        if kind < 0.55:
            line = (
                f"[rank{rank}]: {{'loss': {rng.uniform(1.5, 3):.4f}, 'grad_norm': {rng.uniform(0.2, 2):.4f}, "
                f"'learning_rate': {rng.uniform(1e-5, 3e-4):.3e}, 'epoch': {step / 1e5:.2f}}}"
            )
        elif kind < 0.75:
            line = (
                f"[default{rank % 8}]:step {step}/500000 | loss {rng.uniform(1.5, 3):.4f} | lr 3.000E-04 | "
                f"tokens/s {rng.randint(100_000, 200_000):,} | mfu {rng.uniform(30, 50):.1f}% | "
                f"elapsed {rng.uniform(0.5, 2):.3f}s"
            )
        elif kind < 0.85:
            pct = step % 100
            bar = "█" * (pct // 10) + " " * (10 - pct // 10)
            line = f"Epoch 3:  {pct}%|{bar}| {step % 10000}/10000 [1:02:11<1:25:50,  1.13it/s, loss=1.92, v_num=17]"
        elif kind < 0.90:
            line = (
                f"[rank{rank}]:[W{rng.randint(101, 1231):04d} 12:{rng.randint(0, 59):02d}:{rng.randint(0, 59):02d}."
                f"{rng.randint(0, 999999):06d} {rng.randint(1000, 99999)} torch/distributed/c10d/ProcessGroupNCCL.cpp:"
                f"{rng.randint(100, 3000)}] [PG 0 Rank {rank}] WorkNCCL(SeqNum={step}, OpType=ALLREDUCE, "
                f"NumelIn=131072000, NumelOut=131072000, Timeout(ms)=600000) still running"
            )
        elif kind < 0.93:
            line = (
                '  File "/opt/conda/lib/python3.10/site-packages/torch/distributed/distributed_c10d.py", '
                f"line {rng.randint(100, 4000)}, in all_reduce"
            )
        elif kind < 0.96:
            line = (
                f"W0813 22:08:{rng.randint(10, 59)}.776000 {rng.randint(1000, 9999)} "
                f"torch/distributed/elastic/multiprocessing/api.py:898] Sending process {rng.randint(1000, 99999)} closing signal SIGTERM"
            )
        elif kind < 0.985:
            line = (
                f"RuntimeError: CUDA error: an illegal memory access was encountered (faulting address 0x7f{rng.randint(0, 16**10):010x})"
            )
        elif kind < 0.9999:
            line = (
                f"gpu-node-{rank // 8:03d}:{rng.randint(1000, 9999)}:{rng.randint(1000, 9999)} [{rank % 8}] NCCL INFO "
                f"Channel {rng.randint(0, 31):02d}/32 :    0   1   2   3   4   5   6   7"
            )
        else:
            line = _fill(rng.choice(_SECRETS), rng)
        yield prefix + line


def write_log(path: Path, size_mb: int, *, launcher_prefix: bool) -> int:
    """Write a log of about ``size_mb`` MB to ``path``; return its size in bytes."""
    rng = random.Random(1234)
    target = size_mb * 1_000_000
    written = 0
    with path.open("w", encoding="utf-8") as out:
        batch: list[str] = []
        for line in log_lines(rng, launcher_prefix=launcher_prefix):
            batch.append(line)
            written += len(line.encode()) + 1
            if len(batch) == 10_000 or written >= target:
                out.write("\n".join(batch) + "\n")
                batch = []
            if written >= target:
                return path.stat().st_size
    return path.stat().st_size


def chunks(path: Path) -> Iterator[str]:
    """Yield ~1 MB blocks of whole lines (no trailing newline), as the product's reader does."""
    rest = ""
    with path.open(encoding="utf-8") as log:
        while block := log.read(CHUNK):
            block = rest + block
            cut = block.rfind("\n")
            if cut < 0:
                rest = block
                continue
            rest = block[cut + 1 :]
            yield block[:cut]
    if rest:
        yield rest


def main() -> None:
    """Generate the log, time plain reading and redaction, print MB/s for both."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--size-mb", type=int, default=200, help="size of the generated log in MB")
    parser.add_argument("--launcher-prefix", action="store_true", help="prefix every line with a host (pdsh)")
    parser.add_argument("--generated", action="store_true", help="print masking figures on freshly generated secrets instead")
    parser.add_argument("--seed", type=int, default=None, help="seed of --generated (default: fresh)")
    parser.add_argument("--draws", type=int, default=3, help="draws per shape and prefix for --generated")
    args = parser.parse_args()
    if args.generated:
        print_generated(args.seed, args.draws)
        return
    with tempfile.TemporaryDirectory(prefix="bench-redaction-") as tmp:
        path = Path(tmp) / "train.log"
        size = write_log(path, args.size_mb, launcher_prefix=args.launcher_prefix)
        mb = size / 1e6
        start = time.perf_counter()
        for _ in chunks(path):
            pass
        read_s = time.perf_counter() - start
        redactor = Redactor()
        start = time.perf_counter()
        for block in chunks(path):
            redactor.redact_text(block)
        redact_s = time.perf_counter() - start
        print(f"log: {mb:.1f} MB, launcher prefix: {args.launcher_prefix}")
        print(f"plain read: {mb / read_s:8.1f} MB/s ({read_s:.2f} s)")
        print(f"redaction:  {mb / (read_s + redact_s):8.1f} MB/s end to end, {mb / redact_s:.1f} MB/s masking alone ({redact_s:.2f} s)")
        print(f"masks by type: {dict(sorted(redactor.counts.items()))}")


def print_generated(seed: int | None, draws: int) -> None:
    """Print the three acceptance figures of the generated corpus (secrets, identifying values, keep lines)."""
    from tests.redaction.generator import IDENT_SHAPES, PREFIXES, SECRET_SHAPES, measure, run_seed

    seed = run_seed() if seed is None else seed
    figures = measure(seed, draws=draws)
    print(
        f"generated corpus, seed {seed}: {len(SECRET_SHAPES)} secret shapes, {len(IDENT_SHAPES)} identifying shapes, "
        f"{len(PREFIXES)} launcher prefixes, {draws} draws each"
    )
    print(f"secrets masked:            {figures.secrets:.2%}")
    print(f"identifying values masked: {figures.idents:.2%}")
    print(f"harmless lines unchanged:  {figures.keep:.2%}")


if __name__ == "__main__":
    main()
