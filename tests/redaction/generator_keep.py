"""Harmless training-log lines that must come through redaction unchanged (the generator's keep set).

Versions with four parts, GPU models after prepositions, git hashes, digests in file names,
PCI ids, environment settings and key words without values: the look-alikes of secrets and
identifying values.
"""

from __future__ import annotations

import random
from collections.abc import Callable

from tests.redaction.generator_values import HEX, chars, uuid

_CUDA_PKGS = (
    "nvidia-cublas-cu12",
    "nvidia-cudnn-cu12",
    "nvidia-cuda-runtime-cu12",
    "nvidia-cufft-cu12",
    "nvidia-nccl-cu12",
    "nvidia-cusparse-cu12",
    "nvidia-cusolver-cu12",
    "nvidia-curand-cu12",
    "nvidia-nvjitlink-cu12",
    "nvidia-cuda-nvrtc-cu12",
)
_GPUS = (
    "A100",
    "A100-SXM4-80GB",
    "H100",
    "H100 80GB HBM3",
    "MI300X",
    "MI250X",
    "GH200",
    "L40S",
    "L4",
    "A10G",
    "V100",
    "RTX 4090",
    "RTX A6000",
    "T4",
    "B200",
    "H200",
)
_PREPS = ("on", "to", "from", "at", "by")


def _v4(rng: random.Random) -> str:
    return f"{rng.randint(8, 12)}.{rng.randint(0, 9)}.{rng.randint(0, 200)}.{rng.randint(1, 120)}"


KEEP: tuple[Callable[[random.Random], str], ...] = (
    lambda rng: f"{rng.choice(_CUDA_PKGS):<28}{_v4(rng)}",
    lambda rng: f"{rng.choice(_CUDA_PKGS):<28}{_v4(rng):<16}pypi_0    pypi",
    lambda rng: f"{rng.choice(_CUDA_PKGS)}=={_v4(rng)}",
    lambda rng: f"Running benchmark {rng.choice(_PREPS)} {rng.choice(_GPUS)} with batch size {rng.choice((8, 16, 32))}",
    lambda rng: f"Detected {rng.randint(1, 8)} GPUs: NVIDIA {rng.choice(_GPUS)}",
    lambda rng: f"Setting matmul precision {rng.choice(('to tf32', 'to bf16', 'to highest', 'on tf32'))}",
    lambda rng: (
        f"HEAD is now at {chars(rng, HEX, 7)} {rng.choice(('fix loader', 'bump deps', 'Merge pull request #' + str(rng.randint(1, 999))))}"
    ),
    lambda rng: f"commit {chars(rng, HEX, 40)}",
    lambda rng: f"torch {rng.randint(1, 2)}.{rng.randint(0, 6)}.{rng.randint(0, 3)}+cu{rng.choice((118, 121, 124))}",
    lambda rng: f"transformers version: {rng.randint(4, 4)}.{rng.randint(30, 46)}.{rng.randint(0, 3)}",
    lambda rng: (
        f"hidden_states shape: torch.Size([{rng.choice((1, 2, 4, 8))}, {rng.choice((512, 2048, 4096))}, {rng.choice((768, 4096, 8192))}])"
    ),
    lambda rng: f"GPU {rng.randint(0, 7)}: 0000:{rng.randint(0, 255):02x}:{rng.randint(0, 31):02x}.0 NVIDIA {rng.choice(_GPUS)}",
    lambda rng: f"Loading checkpoint shards from model-{rng.randint(1, 4):05d}-of-00004.safetensors sha256={chars(rng, HEX, 64)}",
    lambda rng: f"saved ckpt_step{rng.randint(1, 99999)}_{chars(rng, HEX, 12)}.pt",
    lambda rng: f"NCCL version {rng.randint(2, 2)}.{rng.randint(14, 23)}.{rng.randint(1, 4)}+cuda{rng.choice(('12.1', '12.4', '11.8'))}",
    lambda rng: (
        f"step {rng.randint(1, 99999)} | loss {rng.uniform(1, 5):.4f} | "
        f"lr {rng.uniform(1e-5, 3e-4):.2e} | grad_norm {rng.uniform(0, 3):.3f}"
    ),
    lambda rng: f"{{'loss': {rng.uniform(1, 5):.4f}, 'learning_rate': {rng.uniform(1e-5, 3e-4):.3e}, 'epoch': {rng.uniform(0, 3):.2f}}}",
    lambda rng: f"Rank {rng.randint(0, 63)} / world size {rng.choice((8, 16, 64))}: local_rank={rng.randint(0, 7)}",
    lambda rng: f"worker exited with exit code {rng.choice((1, 2, 137, 139, -9))}",
    lambda rng: f"torch.distributed.elastic.multiprocessing.errors.ChildFailedError: exitcode: {rng.choice((1, -6, -9))}",
    lambda rng: (
        f"CUDA Version: {rng.choice(('12.2', '12.4', '11.8'))}  Driver "
        f"Version: {rng.randint(470, 560)}.{rng.randint(10, 99)}.{rng.randint(1, 99):02d}"
    ),
    lambda rng: f"cudnn {rng.randint(8, 9)}.{rng.randint(0, 9)}.{rng.randint(0, 9)}.{rng.randint(1, 99)}",
    lambda rng: (
        f"Epoch {rng.randint(0, 9)}: {rng.randint(0, 100)}%|#####     |"
        f" {rng.randint(0, 999)}/1000 [01:02<01:00, {rng.uniform(1, 9):.2f}it/s]"
    ),
    lambda rng: (
        f"model.layers.{rng.randint(0, 31)}.self_attn.q_proj.weight: "
        f"torch.bfloat16 [{rng.choice((4096, 8192))}, {rng.choice((4096, 8192))}]"
    ),
    lambda rng: f"Using {rng.choice(('bf16', 'fp16', 'tf32'))} mixed precision on {rng.choice(_GPUS)}",
    lambda rng: f"dataset digest {chars(rng, HEX, 32)} matches manifest",
    lambda rng: f"throughput: {rng.randint(1000, 99999)} tokens/s/gpu, MFU {rng.uniform(20, 60):.1f}%",
    lambda rng: (
        f"Downloading data: 100%|██████████| {rng.randint(1, 999)}M/{rng.randint(1, 999)}M "
        f"[00:{rng.randint(10, 59)}<00:00, {rng.randint(1, 99)}MB/s]"
    ),
    lambda rng: f"git describe: v{rng.randint(0, 3)}.{rng.randint(0, 20)}.{rng.randint(0, 9)}-{rng.randint(1, 99)}-g{chars(rng, HEX, 7)}",
    lambda rng: f"uuid of run: {uuid(rng)}",
    lambda rng: f"{rng.choice(('pad_token', 'eos_token', 'bos_token'))}: {rng.choice(('<|endoftext|>', '</s>', '<s>', '[PAD]'))}",
    lambda rng: f"generation config: max_new_tokens={rng.choice((128, 512, 2048))}, use_cache=True, eos_token_id={rng.randint(0, 3)}",
    lambda rng: rng.choice(
        (
            "NCCL_IB_HCA=mlx5_0,mlx5_1",
            "CUDA_VISIBLE_DEVICES=0,1,2,3",
            "TORCH_NCCL_ASYNC_ERROR_HANDLING=1",
            "OMP_NUM_THREADS=8",
            "PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True",
        )
    ),
    lambda rng: (
        f"{rng.choice(('MASTER_ADDR=localhost', 'MASTER_ADDR=127.0.0.1', 'hostname: localhost', 'host=127.0.0.1'))} "
        f"MASTER_PORT={rng.randint(20000, 30000)}"
    ),
    lambda rng: f"moving model to device cuda:{rng.randint(0, 7)} on rank {rng.randint(0, 7)} at step {rng.randint(0, 9999)}",
    lambda rng: f"[W reducer.cpp:{rng.randint(100, 2000)}] Warning: find_unused_parameters=True was specified in DDP constructor",
    lambda rng: f"Running on local URL:  http://127.0.0.1:{rng.randint(7000, 9000)}",
    lambda rng: f"NCCL INFO Channel {rng.randint(0, 31):02d}/32 :    0   1   2   3   4   5   6   7",
    lambda rng: (
        f"huggingface_hub.errors.HfHubHTTPError: {rng.choice((401, 403, 429))} Client "
        "Error for url: https://huggingface.co/api/models/meta-llama/Llama-2-7b-hf"
    ),
    lambda rng: "WANDB_API_KEY is not set; run `wandb login` or set WANDB_MODE=offline",
    lambda rng: f"Loaded tokenizer with vocab_size={rng.choice((32000, 128256, 50257))} and special tokens {{'pad_token': '[PAD]'}}",
    lambda rng: f"+ python generate.py --max_new_tokens {rng.choice((128, 512))} --pad-token </s> --tokenizer gpt2 --bos-token 1",
    lambda rng: rng.choice(("Login Succeeded", "wandb: login successful", "huggingface_hub: token is valid (permission: read)")),
    lambda rng: "                        [--hub_token HUB_TOKEN] [--hub_private_repo HUB_PRIVATE_REPO]",
    lambda rng: f"sort_key=length bucket_boundaries=[{rng.randint(64, 256)}, {rng.randint(512, 1024)}]",
)


def keep_lines(rng: random.Random, prefixes: dict[str, Callable[[int, random.Random], str]], *, n: int = 480) -> list[str]:
    """``n`` harmless lines, each behind one of ``prefixes`` (launcher prefixes without host names)."""
    names = list(prefixes)
    lines = []
    for i in range(n):
        make = KEEP[i % len(KEEP)]
        lines.append(prefixes[names[i % len(names)]](rng.randint(0, 7), rng) + make(rng))
    return lines
