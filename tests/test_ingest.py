"""Reading inputs: files, directories, .gz, stdin, and clean errors on bad input."""

from __future__ import annotations

import gzip
from pathlib import Path

import pytest

from diagnose.errors import InputError
from diagnose.parse.ingest import MAX_LINE_CHARS, cut_long_lines, read_chunks, resolve_sources


def _text(path: Path, chunk_bytes: int = 1 << 20) -> str:
    return "\n".join(chunk.text for source in resolve_sources([str(path)]) for chunk in read_chunks(source, chunk_bytes))


def test_directory_yields_every_log_file_sorted(tmp_path: Path) -> None:
    (tmp_path / "node01").mkdir()
    (tmp_path / "node01" / "rank_1.log").write_text("b\n")
    (tmp_path / "rank_0.log").write_text("a\n")
    (tmp_path / "model.safetensors").write_bytes(b"\x00\x01")
    names = [s.name for s in resolve_sources([str(tmp_path)])]
    assert names == ["node01/rank_1.log", "rank_0.log"]


def test_gz_is_decompressed(tmp_path: Path) -> None:
    path = tmp_path / "train.log.gz"
    with gzip.open(path, "wt") as handle:
        handle.write("line one\nline two\n")
    assert _text(path) == "line one\nline two"


def test_chunks_cut_at_newlines_and_number_lines(tmp_path: Path) -> None:
    path = tmp_path / "big.log"
    path.write_text("".join(f"line {i}\n" for i in range(1, 2001)))
    chunks = list(read_chunks(resolve_sources([str(path)])[0], chunk_bytes=1000))
    assert len(chunks) > 5
    for chunk in chunks:
        assert chunk.text.split("\n")[0] == f"line {chunk.first_line}"
    assert sum(c.text.count("\n") + 1 for c in chunks) == 2000


def test_progress_bar_updates_keep_the_last_state_and_ansi_is_dropped(tmp_path: Path) -> None:
    path = tmp_path / "tqdm.log"
    path.write_bytes(b"\x1b[32mok\x1b[0m\r\n 10%|#\r 50%|#####\r100%|##########\ndone\n")
    assert _text(path) == "ok\n100%|##########\ndone"


def test_huge_line_is_cut_not_fatal(tmp_path: Path) -> None:
    path = tmp_path / "huge.log"
    path.write_text("x" * (MAX_LINE_CHARS * 3) + "\nafter\n")
    lines = cut_long_lines(_text(path).split("\n"))
    assert lines[-1] == "after"
    assert all(len(line) <= MAX_LINE_CHARS + 40 for line in lines)
    assert lines[0].endswith("[... line cut by diagnose]")


def test_invalid_utf8_is_replaced_and_counted(tmp_path: Path) -> None:
    path = tmp_path / "bad.log"
    path.write_bytes(b"loss 1.0\nname \xff\xfe here\n")
    chunk = next(read_chunks(resolve_sources([str(path)])[0]))
    assert chunk.replaced_bytes == 2
    assert "name" in chunk.text


@pytest.mark.parametrize(("content", "message"), [(b"\x7fELF\x02\x01\x00\x00" * 100, "binary")])
def test_binary_input_is_an_input_error(tmp_path: Path, content: bytes, message: str) -> None:
    path = tmp_path / "a.out"
    path.write_bytes(content)
    with pytest.raises(InputError, match=message):
        _text(path)


@pytest.mark.parametrize(
    "content",
    [
        # a DataLoader worker's segfault handler writes its C string with the terminator (a committed real log)
        b"Epoch 3 | loss 0.1234 | lr 1.0e-4 | 812 samples/s\n" * 40
        + b"ERROR: Unexpected segmentation fault encountered in worker.\n\x00" * 8
        + b"Segmentation fault\n",
        # a hole: the log was truncated while the process kept writing at its old offset
        b"\x00" * 20000 + b"epoch 3\nSegmentation fault\n",
    ],
)
def test_a_text_log_holding_nul_bytes_is_read_as_text_without_them(tmp_path: Path, content: bytes) -> None:
    path = tmp_path / "train.log"
    path.write_bytes(content)
    text = _text(path)
    assert "Segmentation fault" in text
    assert "\x00" not in text


@pytest.mark.parametrize("encoding", ["utf-16", "utf-16-be"])
@pytest.mark.parametrize("packed", [False, True], ids=["plain", "gzip"])
def test_a_utf16_log_with_its_byte_order_mark_is_read_as_text(tmp_path: Path, encoding: str, packed: bool) -> None:
    """Windows PowerShell 5's ``python train.py > train.log`` writes UTF-16LE with a byte-order mark (gzipped too)."""
    path = tmp_path / "train.log"
    lines = ["epoch 1 étape 7", "[rank3]: torch.OutOfMemoryError: CUDA out of memory."] * 40_000
    bom = "\ufeff" if encoding == "utf-16-be" else ""
    data = (bom + "\r\n".join(lines) + "\r\n").encode(encoding)
    path.write_bytes(gzip.compress(data) if packed else data)
    text = _text(path, chunk_bytes=1 << 16)
    assert text.split("\n")[:2] == lines[:2]
    assert text.count("CUDA out of memory") == 40_000


def test_missing_path_is_an_input_error() -> None:
    with pytest.raises(InputError, match="no such file"):
        resolve_sources(["/nonexistent/train.log"])


def test_gzip_is_recognised_by_its_magic_bytes_on_stdin_in_memory_and_any_name(tmp_path: Path) -> None:
    import subprocess
    import sys

    from diagnose.parse.ingest import Source

    text = "[rank3]: torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB\n"
    packed = gzip.compress(text.encode())
    odd_name = tmp_path / "train.log"  # gzip under a plain name
    odd_name.write_bytes(packed)
    assert "".join(c.text for c in read_chunks(Source("train.log", odd_name))) == text.rstrip("\n")
    assert "".join(c.text for c in read_chunks(Source("upload.log", None, data=packed))) == text.rstrip("\n")
    done = subprocess.run(
        [sys.executable, "-m", "diagnose", "log", "--json", "--no-retrieval", "-"],
        input=packed,
        capture_output=True,
        timeout=120,
        env={"DIAGNOSE_HOME": str(tmp_path / "home"), "PATH": "/usr/bin:/bin"},
    )
    assert done.returncode == 0, done.stderr
    assert b'"cuda-oom"' in done.stdout


@pytest.mark.parametrize("content", [b"\x1f\x8b\x08\x00garbage-after-a-gzip-header", b"\x1f\x8b"])
def test_corrupt_or_truncated_gzip_is_an_input_error(tmp_path: Path, content: bytes) -> None:
    from diagnose.parse.ingest import Source

    path = tmp_path / "run.log.gz"
    path.write_bytes(content)
    with pytest.raises(InputError, match=r"run\.log\.gz: cannot read"):
        list(read_chunks(Source(path.name, path)))


def test_error_messages_mask_a_secret_in_the_path() -> None:
    with pytest.raises(InputError) as caught:
        resolve_sources(["/data/hf_QbXkTnWmLpRsVaYcZdEfGhJkMnPq1234/train.log"])
    assert "hf_QbXkTnWmLpRsVaYcZdEfGhJkMnPq1234" not in str(caught.value)
    assert "no such file or directory" in str(caught.value)


def test_a_line_too_long_to_hold_is_cut_at_a_separator_not_inside_a_token(tmp_path: Path) -> None:
    from diagnose.parse.ingest import Source

    token = "hf_QbXkTnWmLpRsVaYcZdEfGhJkMnPq1234"
    chunk = 4096
    filler = "x" * 7 + " "
    head = filler * ((chunk * 4 - 20) // len(filler))  # the token straddles the 4-chunk hard cut
    path = tmp_path / "oneline.log"
    path.write_text(head + token + " tail", encoding="utf-8")
    pieces = [c.text for c in read_chunks(Source(path.name, path), chunk_bytes=chunk)]
    assert len(pieces) > 1
    assert any(token in piece for piece in pieces)
