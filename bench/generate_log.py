"""Write a large synthetic multi-rank training log with one buried root cause.

    python bench/generate_log.py OUT.log --size-mb 1000 --ranks 512

Normal output from every rank (steps, NCCL INFO, warnings, progress bars), a CUDA OOM on one rank
late in the run, then the collateral real runs print: watchdog timeouts on every other rank and the
launcher's teardown. Prints the planted root cause as JSON on stdout.
"""

from __future__ import annotations

import argparse
import json
import random

NORMAL = [
    "[rank{r}]:[2026-12-02 {t}] INFO step {s} | loss {loss:.4f} | lr 2.40e-04 | grad_norm {g:.3f} | tokens/s {tok} | mem 61.3GiB",
    "[rank{r}]:node-{n:03d}:{pid}:{pid} [{lr}] NCCL INFO Channel 0{c}/32 : {r} -> {nr} via P2P/CUMEM/read",
    "[rank{r}]:[W1202 {tg} ProcessGroupNCCL.cpp:4115] [PG ID 0 PG GUID 0 Rank {r}] using GPU {lr} to perform barrier as devices "
    "used by this process are currently unknown.",
    "[rank{r}]:/opt/conda/lib/python3.11/site-packages/torch/utils/checkpoint.py:1399: FutureWarning: `torch.cpu.amp.autocast(args...)` "
    "is deprecated. Please use `torch.amp.autocast('cpu', args...)` instead.",
    "[rank{r}]:Epoch 3:  41%|####1     | {s}/9000 [1:02:11<1:29:40,  1.01s/it, loss={loss:.3f}]",
]


GLOG = "[rank{r}]:[I1202 {tg} train.py:{fl}] step {s} | loss {loss:.4f} | lr 2.40e-04 | grad_norm {g:.3f} | tokens/s {tok}"
"""The ``glog`` shape: every line a torchrun rank prefix and a glog header, ~125 bytes, as users' logs look."""


def _clock(seconds: int) -> tuple[str, str]:
    h, m, s = seconds // 3600 % 24, seconds // 60 % 60, seconds % 60
    return f"{h:02d}:{m:02d}:{s:02d},{seconds % 1000:03d}", f"{h:02d}:{m:02d}:{s:02d}.{seconds % 1000000:06d}"


def generate(path: str, size_mb: int, ranks: int, seed: int = 1, shape: str = "mixed") -> dict[str, object]:
    """Write the log (``mixed``: steps, NCCL INFO, warnings, progress bars; ``glog``: one glog step line shape); return the truth."""
    templates = [GLOG] if shape == "glog" else NORMAL
    rng = random.Random(seed)
    target = size_mb * 1024 * 1024
    culprit = rng.randrange(1, ranks)
    written = 0
    step = 0
    with open(path, "w", encoding="utf-8", buffering=1 << 20) as out:
        while written < target * 0.97:
            step += 1
            t, tg = _clock(36000 + step)
            batch = []
            for _ in range(200):
                r = rng.randrange(ranks)
                line = rng.choice(templates).format(
                    fl=rng.randrange(100, 999),
                    r=r,
                    t=t,
                    tg=tg,
                    s=step,
                    loss=2.0 + rng.random(),
                    g=rng.random() + 0.5,
                    tok=rng.randrange(40000, 44000),
                    n=r // 8,
                    pid=10000 + r,
                    lr=r % 8,
                    c=rng.randrange(10),
                    nr=(r + 1) % ranks,
                )
                batch.append(line)
            text = "\n".join(batch) + "\n"
            out.write(text)
            written += len(text)
        t, tg = _clock(36000 + step + 1)
        out.write(
            f"[rank{culprit}]: Traceback (most recent call last):\n"
            f'[rank{culprit}]:   File "/workspace/train.py", line 377, in train\n'
            f"[rank{culprit}]:     loss.backward()\n"
            f"[rank{culprit}]: torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 4.00 GiB. GPU {culprit % 8} has a "
            "total capacity of 79.11 GiB of which 1.20 GiB is free.\n"
        )
        _, tg = _clock(36000 + step + 601)
        for r in range(ranks):
            if r != culprit:
                out.write(
                    f"[rank{r}]:[E1202 {tg} ProcessGroupNCCL.cpp:616] [Rank {r}] Watchdog caught collective operation timeout: "
                    f"WorkNCCL(SeqNum={step * 3}, OpType=ALLREDUCE, NumelIn=262144, NumelOut=262144, Timeout(ms)=600000) "
                    "ran for 600017 milliseconds before timing out.\n"
                )
        for r in range(0, ranks, 8):
            out.write(
                f"W1202 {tg} 9120 torch/distributed/elastic/multiprocessing/api.py:897] Sending process {20000 + r} "
                "closing signal SIGTERM\n"
            )
    return {"path": path, "root_cause": "cuda-oom", "initiating_rank": culprit, "ranks": ranks}


def main() -> None:
    """CLI entry point."""
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("out")
    parser.add_argument("--size-mb", type=int, default=100)
    parser.add_argument("--ranks", type=int, default=512)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--shape", choices=["mixed", "glog"], default="mixed")
    args = parser.parse_args()
    print(json.dumps(generate(args.out, args.size_mb, args.ranks, args.seed, args.shape)))


if __name__ == "__main__":
    main()
