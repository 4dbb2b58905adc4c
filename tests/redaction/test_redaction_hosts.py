"""Host names: FQDNs, MASTER_ADDR values, launcher prefixes, node lists, pod names."""

from __future__ import annotations

import pytest

from redaction import Redactor

ROWS = [
    ("MASTER_ADDR=node07.cluster.internal", "MASTER_ADDR=<HOST_1>"),
    ("+ export MASTER_ADDR=node-03.cluster.internal", "+ export MASTER_ADDR=<HOST_1>"),
    (
        "+ torchrun --nnodes=8 --node_rank=2 --master_addr=gpu-a100-001.hpc.example.edu --master_port=29500 train.py",
        "+ torchrun --nnodes=8 --node_rank=2 --master_addr=<HOST_1> --master_port=29500 train.py",
    ),
    ("MASTER_ADDR=10.0.3.4 MASTER_PORT=29500 WORLD_SIZE=64 RANK=0", "MASTER_ADDR=<IP_1> MASTER_PORT=29500 WORLD_SIZE=64 RANK=0"),
    ("MASTER_ADDR=hpc-gpu-n0117", "MASTER_ADDR=<HOST_1>"),
    ('os.environ["MASTER_ADDR"] = "192.168.50.3"', 'os.environ["MASTER_ADDR"] = "<IP_1>"'),
    ("deepspeed --master_addr 172.16.4.20 --master_port 29501 train.py", "deepspeed --master_addr <IP_1> --master_port 29501 train.py"),
    ("node07: [rank3]: RuntimeError: NCCL error", "<HOST_1>: [rank3]: RuntimeError: NCCL error"),
    ("worker-3: Traceback (most recent call last):", "<HOST_1>: Traceback (most recent call last):"),
    (
        "node-17:3121:3121 [0] NCCL INFO NET/Socket : Using [0]eth0:10.0.3.4<0>",
        "<HOST_1>:3121:3121 [0] NCCL INFO NET/Socket : Using [0]eth0:<IP_1><0>",
    ),
    ("srun: error: node-042: task 3: Exited with exit code 1", "srun: error: <HOST_1>: task 3: Exited with exit code 1"),
    ("  host      : gpu-node-017.cluster.internal", "  host      : <HOST_1>"),
    ("  host      : node07", "  host      : <HOST_1>"),
    ("rank 5 on node07 failed", "rank 5 on <HOST_1> failed"),
    ("SLURM_NODELIST=node[01-04]", "SLURM_NODELIST=<HOST_1>"),
    (
        "[pytorchjob-llm7b-master-0]:1:[E ProcessGroupNCCL.cpp:475] [Rank 1] Watchdog caught collective operation timeout",
        "[<HOST_1>]:1:[E ProcessGroupNCCL.cpp:475] [Rank 1] Watchdog caught collective operation timeout",
    ),
    ("HOSTNAME=pytorchjob-alice-gpt-worker-0", "HOSTNAME=<HOST_1>"),
    (
        "Warning  Evicted  3m  kubelet  pod/llama-train-worker-3-7f9c6d5b8-xk2lp  The node was low on resource: memory.",
        "Warning  Evicted  3m  kubelet  pod/<HOST_1>  The node was low on resource: memory.",
    ),
    (
        "Successfully assigned ml/vllm-serve-6f7b9c8d4-qj2xm to gke-ml-pool-a100-3f9c2d1e-x7k2",
        "Successfully assigned ml/<HOST_1> to <HOST_2>",
    ),
    (
        "socket.gaierror: [Errno -2] Name or service not known: 'trainer-master-0.trainer.ml-team.svc.cluster.local'",
        "socket.gaierror: [Errno -2] Name or service not known: '<HOST_1>'",
    ),
    (
        "[1,2]<stdout>:gpu-dgx-a7:51235:51235 [2] NCCL INFO Bootstrap : Using enp97s0f0:10.200.7.17<0>",
        "[1,2]<stdout>:<HOST_1>:51235:51235 [2] NCCL INFO Bootstrap : Using enp97s0f0:<IP_1><0>",
    ),
    ("pnowak@login2:~/mdgnn$ srun --label -n 8 python train.py", "<USER_1>@<HOST_1>:~/mdgnn$ srun --label -n 8 python train.py"),
    ("(llama) root@a800-node-2:/workspace# accelerate launch", "(llama) root@<HOST_1>:/workspace# accelerate launch"),
    ("worker ip-172-31-22-9 exited with code -9", "worker <HOST_1> exited with code -9"),
    ("no_proxy=localhost,127.0.0.1,.hpc.example.edu", "no_proxy=localhost,127.0.0.1,.<HOST_1>"),
    (
        "ray.exceptions.RaySystemError: System error: Failed to connect to GCS at head-node.ml.example.net:6379",
        "ray.exceptions.RaySystemError: System error: Failed to connect to GCS at <HOST_1>:6379",
    ),
    (
        "AssertionError: Rank 3: found NaN in local grad norm in backwards pass. Device: 3, node: set-zw04-kubernetes-pc133.mt",
        "AssertionError: Rank 3: found NaN in local grad norm in backwards pass. Device: 3, node: <HOST_1>",
    ),
]

# Shapes that look like hosts and are not: module names, files, public services, ranks.
NEGATIVE_ROWS = [
    "torch.distributed.elastic.multiprocessing.errors.ChildFailedError:",
    "W0813 22:08:39.776000 2585 torch/distributed/elastic/multiprocessing/api.py:898] Sending process 2711 closing signal SIGTERM",
    "    out = self.net(x)",
    "from torchvision.io import read_image",
    "[rank3]:[W reducer.cpp:1360] Warning: find_unused_parameters=True was specified in DDP constructor",
    "[default3]:Traceback (most recent call last):",
    "[1,3]<stderr>:RuntimeError: NCCL communicator was aborted on rank 3.",
    "fatal: Could not read from remote repository. (git@github.com:huggingface/transformers.git)",
    "[W socket.cpp:663] [c10d] The client socket has failed to connect to [localhost]:29500 (errno: 99).",
    "python[48213]: segfault at 7f3a2c000010 ip 00007f3b1c2d3e4f sp 00007ffd2a3b4c50 error 4 in libcuda.so.535.104.05",
    "Digest: sha256:4b1f1a5e2c9d8e7f6a5b4c3d2e1f0a9b8c7d6e5f4a3b2c1d0e9f8a7b6c5d4e3f "
    "Status: Downloaded newer image for nvcr.io/nvidia/pytorch:24.03-py3",
    "GPU 0: NVIDIA A100-SXM4-80GB (UUID: GPU-5b1e9c3a-7d2f-4e8b-a1c6-0f9d8e7c6b5a)",
    "wandb: Syncing run run-20240501_120000-3kx9z2ab",
    "Loading model.safetensors from model-00001-of-00002.safetensors",
    "python3: can't open file 'trian.py': [Errno 2] No such file or directory",
    "urllib3.exceptions.MaxRetryError: HTTPSConnectionPool(host='huggingface.co', port=443): Max retries exceeded",
    "node: 0",
    "node: 3/4 done",
    # Slurm's slurmstepd/ulimits.c: a sentence goes on after "host:"; learning "Operation" would mask the word everywhere
    "slurmstepd: error: Can't propagate RLIMIT_MEMLOCK of 'unlimited' from submit host: Operation not permitted",
]


@pytest.mark.parametrize(("line", "expected"), ROWS)
def test_when_a_line_names_a_host_then_it_becomes_a_host_placeholder(line: str, expected: str) -> None:
    assert Redactor().redact_line(line) == expected


@pytest.mark.parametrize("line", NEGATIVE_ROWS)
def test_when_a_name_only_looks_like_a_host_then_the_line_is_unchanged(line: str) -> None:
    assert Redactor().redact_line(line) == line


def test_when_a_host_recurs_in_several_shapes_then_it_keeps_one_placeholder(redactor: Redactor) -> None:
    lines = ["node07: starting", "rank 5 on node07 failed", "MASTER_ADDR=node07", "node08: starting"]
    assert list(redactor.redact_lines(lines)) == [
        "<HOST_1>: starting",
        "rank 5 on <HOST_1> failed",
        "MASTER_ADDR=<HOST_1>",
        "<HOST_2>: starting",
    ]
    assert redactor.counts == {"HOST": 4}


def test_when_a_cluster_fqdn_and_its_node_name_both_appear_then_they_share_a_placeholder(redactor: Redactor) -> None:
    text = "MASTER_ADDR=node-17.cluster.internal\nnode-17:3121:3121 [0] NCCL INFO Channel 00/32"
    assert redactor.redact_text(text) == "MASTER_ADDR=<HOST_1>\n<HOST_1>:3121:3121 [0] NCCL INFO Channel 00/32"
