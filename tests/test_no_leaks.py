"""Nothing unmasked leaves the process or lands on disk: the output, the vector store, the caches.

A log with planted secrets goes through log, chat and the LLM path with retrieval on, in a fresh
DIAGNOSE_HOME; then every byte under that directory and every document in the index is searched.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from tests.conftest import EXAMPLES
from tests.fake_openai import FakeOpenAI

SECRETS = {
    "hf_QbXkTnWmLpRsVaYcZdEfGhJkMnPq1234": "[rank0]: HF_TOKEN=hf_QbXkTnWmLpRsVaYcZdEfGhJkMnPq1234",
    "AKIAZ7QXPL3MVR2KTN4W": "aws_access_key_id = AKIAZ7QXPL3MVR2KTN4W",
    "ghp_R8mKq2LxVt7NcWz4PjHs9YdFb3GaE6uT1oQi": "git clone https://ghp_R8mKq2LxVt7NcWz4PjHs9YdFb3GaE6uT1oQi@github.com/acme/train.git",
    "dana.kowalski@example.org": "[rank3]: wandb: logged in as dana.kowalski@example.org",
    "trn-a100-117.prod.example.net": "[rank5]: RuntimeError: connect() to trn-a100-117.prod.example.net:29500 failed",
    "s3cr3tP4ss": "MLFLOW_TRACKING_URI=https://mlops:s3cr3tP4ss@mlflow.example.net",
}


def test_nothing_unmasked_in_output_index_or_disk(tmp_path: Path) -> None:
    log = tmp_path / "planted.log"
    log.write_text("\n".join(SECRETS.values()) + "\n" + (EXAMPLES / "multi-rank-oom.log").read_text())
    home = tmp_path / "home"
    env = {**os.environ, "DIAGNOSE_HOME": str(home)}
    outputs = []
    with FakeOpenAI() as fake:
        fake.default_reply = json.dumps(
            {"root_cause": "cuda-oom", "initiating_rank": 5, "evidence": ["planted.log:209"], "explanation": "x", "fix": [], "verify": []}
        )
        # the index is built only when consulted: build it in this home, then diagnose, so the store is checked too
        runs = (
            ["kb", "index"],
            ["log", str(log), "--json"],
            ["log", str(log), "--json", "--model", "openai/fake", "--api-base", fake.api_base],
        )
        for args in runs:
            done = subprocess.run([sys.executable, "-m", "diagnose", *args], capture_output=True, text=True, env=env, timeout=300)
            assert done.returncode == 0, done.stderr
            outputs += [done.stdout, done.stderr]
        chat = subprocess.run(
            [sys.executable, "-m", "diagnose", "chat", str(log), "--no-retrieval"],
            input="show the evidence\n/quit\n",
            capture_output=True,
            text=True,
            env=env,
            timeout=300,
        )
        outputs += [chat.stdout, chat.stderr]
        sent = fake.sent_text()
    assert json.loads(outputs[4])["backend"] == "openai/fake"

    import chromadb

    client = chromadb.PersistentClient(path=str(home / "index"), settings=chromadb.Settings(anonymized_telemetry=False))
    documents = [doc for c in client.list_collections() for doc in client.get_collection(c.name).get()["documents"]]
    assert documents, "the index should hold the encyclopedia's passages"
    on_disk = b"\n".join(p.read_bytes() for p in home.rglob("*") if p.is_file())
    for secret in SECRETS:
        assert secret not in "\n".join(outputs), f"{secret} in the output"
        assert secret not in sent, f"{secret} sent to the model"
        assert all(secret not in doc for doc in documents), f"{secret} in the vector store"
        assert secret.encode() not in on_disk, f"{secret} written under DIAGNOSE_HOME"


def test_a_value_recognised_late_is_masked_in_earlier_kept_lines(tmp_path: Path) -> None:
    from diagnose.parse.ingest import resolve_sources
    from diagnose.pipeline import diagnose
    from diagnose.settings import load_settings

    log = tmp_path / "late.log"
    log.write_text(
        "[rank3]: saving to /lustre/fsw/qzhang/ckpt/step_100\n" + (EXAMPLES / "multi-rank-oom.log").read_text() + "SLURM_JOB_USER=qzhang\n"
    )
    result = diagnose(resolve_sources([str(log)]), settings=load_settings())
    kept = result.log.model_dump_json() + result.diagnosis.model_dump_json()
    assert "qzhang" not in kept
    assert "/lustre/fsw/<USER_" in result.log.lines["late.log"][0]
