"""The command line as a user runs it: real processes, the JSON contract, exit codes, inputs."""

from __future__ import annotations

import gzip
import json
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import EXAMPLES

OOM = EXAMPLES / "multi-rank-oom.log"
CONTRACT_KEYS = {
    "root_cause",
    "candidates",
    "initiating_rank",
    "initiating_host",
    "evidence",
    "collateral",
    "mechanism",
    "fix",
    "verify",
    "redactions",
    "backend",
}


def run(*args: str, stdin: bytes | None = None) -> subprocess.CompletedProcess[bytes]:
    """Run the CLI in a subprocess, offline, without the vector index (tested on its own)."""
    command = [sys.executable, "-m", "diagnose", *args]
    if args and args[0] in ("log", "chat", "eval"):
        command.append("--no-retrieval")
    return subprocess.run(command, input=stdin, capture_output=True, timeout=300)


def test_log_json_is_the_contract_and_names_cuda_oom_on_rank_5() -> None:
    done = run("log", str(OOM), "--json")
    assert done.returncode == 0, done.stderr.decode()
    data = json.loads(done.stdout)
    assert set(data) >= CONTRACT_KEYS
    assert data["root_cause"]["id"] == "cuda-oom"
    assert data["initiating_rank"] == 5
    assert data["candidates"][0]["id"] == "cuda-oom"
    assert 0.0 <= data["root_cause"]["confidence"] <= 1.0
    assert any("CUDA out of memory" in e["text"] for e in data["evidence"])
    assert all({"file", "line", "rank", "text"} <= set(e) for e in data["evidence"])
    assert data["fix"] and data["verify"] and all(isinstance(x, str) for x in data["fix"] + data["verify"])
    assert {"ranks", "count", "summary", "id"} <= set(data["collateral"][0])
    assert data["backend"] == "rules"
    assert data["redactions"]["total"] > 0


def test_report_on_a_pipe_is_plain_text() -> None:
    done = run("log", str(OOM))
    out = done.stdout.decode()
    assert done.returncode == 0
    assert "Root cause" in out and "rank 5" in out
    assert "\x1b[" not in out


def test_stdin_is_read_with_dash() -> None:
    done = run("log", "-", "--json", stdin=OOM.read_bytes())
    assert done.returncode == 0
    data = json.loads(done.stdout)
    assert data["root_cause"]["id"] == "cuda-oom"
    assert data["evidence"][0]["file"] == "<stdin>"


def test_directory_of_per_rank_files(tmp_path: Path) -> None:
    lines = OOM.read_text().splitlines()
    for rank in range(8):
        mine = [line.split("]:", 1)[1] for line in lines if line.startswith(f"[rank{rank}]:")]
        (tmp_path / f"rank_{rank}.log").write_text("\n".join(mine) + "\n")
    done = run("log", str(tmp_path), "--json")
    data = json.loads(done.stdout)
    assert done.returncode == 0, done.stderr.decode()
    assert data["root_cause"]["id"] == "cuda-oom"
    assert data["initiating_rank"] == 5
    assert data["evidence"][0]["file"].endswith("rank_5.log")


def test_gz_file(tmp_path: Path) -> None:
    path = tmp_path / "train.log.gz"
    path.write_bytes(gzip.compress(OOM.read_bytes()))
    done = run("log", str(path), "--json")
    assert done.returncode == 0
    assert json.loads(done.stdout)["initiating_rank"] == 5


def test_clean_log_exits_1_with_unknown(tmp_path: Path) -> None:
    path = tmp_path / "clean.log"
    path.write_text("".join(f"[rank0]: step {i} | loss {2.0 - i / 1000:.4f}\n" for i in range(200)) + "training done\n")
    done = run("log", str(path), "--json")
    assert done.returncode == 1
    assert json.loads(done.stdout)["root_cause"]["id"] == "unknown"


@pytest.mark.parametrize(
    ("content", "message"),
    [(b"", "empty"), (b"\n\n  \n", "empty"), (b"\x7fELF\x02\x01\x01\x00" + bytes(range(256)) * 8, "binary")],
)
def test_bad_input_exits_2_with_one_line_and_no_traceback(tmp_path: Path, content: bytes, message: str) -> None:
    path = tmp_path / "input.log"
    path.write_bytes(content)
    done = run("log", str(path))
    err = done.stderr.decode()
    assert done.returncode == 2
    assert message in err
    assert "Traceback" not in err and len(err.strip().splitlines()) == 1


def test_missing_file_exits_2() -> None:
    done = run("log", "/no/such/train.log")
    assert done.returncode == 2
    assert "no such file" in done.stderr.decode()


def test_redact_prints_masked_text_and_stats() -> None:
    done = run("redact", str(OOM), "--stats")
    out = done.stdout.decode()
    assert done.returncode == 0
    assert "hf_QbXkTnWmLpRsVaYcZdEfGhJkMnPq1234" not in out
    assert "<TOKEN_" in out
    assert "masked" in done.stderr.decode()
    assert len(out.splitlines()) == len(OOM.read_text().splitlines())


def test_kb_list_and_show_json() -> None:
    listed = json.loads(run("kb", "list", "--json").stdout)
    assert {"id", "title"} <= set(listed[0])
    assert "cuda-oom" in {row["id"] for row in listed}
    shown = json.loads(run("kb", "show", "cuda-oom", "--json").stdout)
    assert shown["id"] == "cuda-oom"
    assert shown["fix"] and all(isinstance(x, str) for x in shown["fix"])
    assert shown["verify"] and all(isinstance(x, str) for x in shown["verify"])
    missing = run("kb", "show", "no-such-entry")
    assert missing.returncode == 2 and "no encyclopedia entry" in missing.stderr.decode()


def test_help_does_not_import_heavy_libraries() -> None:
    code = (
        "import sys; from typer.testing import CliRunner; from diagnose.cli import app; "
        "r = CliRunner().invoke(app, ['--help']); assert r.exit_code == 0, r.output; "
        "print(','.join(m for m in ('litellm', 'chromadb', 'presidio_analyzer', 'fastapi') if m in sys.modules))"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == ""


@pytest.mark.parametrize("json_flag", [[], ["--json"]])
def test_reader_closing_the_pipe_keeps_the_diagnosis_exit_code(tmp_path: Path, json_flag: list[str]) -> None:
    log = tmp_path / "big-report.log"
    log.write_text(OOM.read_text())
    process = subprocess.Popen(
        [sys.executable, "-m", "diagnose", "log", str(log), "--no-retrieval", *json_flag], stdout=subprocess.PIPE, stderr=subprocess.PIPE
    )
    assert process.stdout is not None and process.stderr is not None
    process.stdout.readline()
    process.stdout.close()  # like `| head -1`
    err = process.stderr.read().decode()
    assert process.wait(timeout=300) == 0, err
    assert "Traceback" not in err
