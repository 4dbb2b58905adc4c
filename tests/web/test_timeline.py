"""Flight Recorder dumps through the web app: uploads of dumps and archives, the timeline SVG, chat answers from the dumps.

The API tests use the shared real server; the browser test drops dump files on the page in Debian's Chromium
and checks the inline SVG names the initiating ranks (a screenshot goes to docs/screenshots/timeline.png when
DIAGNOSE_UPDATE_SCREENSHOTS=1).
"""

from __future__ import annotations

import base64
import importlib.util
import io
import os
import tarfile
import xml.etree.ElementTree as ET
from pathlib import Path
from types import ModuleType

import httpx
import pytest

from .conftest import REPO, Server

SVG = "{http://www.w3.org/2000/svg}"


def _generator() -> ModuleType:
    spec = importlib.util.spec_from_file_location("fr_generate", REPO / "tests" / "fixtures" / "flight_recorder" / "generate.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def hang_files(world: int, stalled: tuple[int, ...]) -> dict[str, bytes]:
    """A ``world``-rank hang as pickled dumps: the ``stalled`` ranks never enter all_reduce #12 the others wait in."""
    gen = _generator()
    groups = {"0": ("default_pg", list(range(world))), "1": ("TENSOR_MODEL_PARALLEL_GROUP", list(range(world)))}
    files = {}
    for rank in range(world):
        entries = [] if rank in stalled else [gen.entry(100 + rank, ("1", "TENSOR_MODEL_PARALLEL_GROUP"), 12, "all_reduce", t=rank)]
        body = gen.dump(groups, {"0": (3, 3), "1": (11 if rank in stalled else 12, 11)}, entries)
        files[f"_dump_{rank}"] = gen.encode(body, "pickle")
    return files


def _svg_texts(svg: str) -> list[str]:
    return [t.text or "" for t in ET.fromstring(svg).iter(f"{SVG}text")]


def test_dump_files_upload_gives_a_timeline_and_dump_answers(client: httpx.Client) -> None:
    files = [("file", (name, data, "application/octet-stream")) for name, data in hang_files(8, (5,)).items()]
    assert client.post("/api/redactions", files=files).status_code == 200
    response = client.post("/api/diagnoses", files=files)
    assert response.status_code == 201, response.text
    created = response.json()
    d = created["diagnosis"]
    assert (d["root_cause"]["id"], d["initiating_ranks"]) == ("nccl-timeout-hang", [5])
    assert d["flight_recorder"]["process_group"] == "TENSOR_MODEL_PARALLEL_GROUP" and d["flight_recorder"]["collective"] == "all_reduce"
    assert "rank 5" in _svg_texts(created["timeline_svg"])
    assert "<script" not in created["timeline_svg"]
    answer = client.post(f"/api/sessions/{created['session_id']}/messages", json={"content": "Which collective was rank 2 stuck in?"})
    assert answer.status_code == 200, answer.text
    body = answer.json()
    assert body["answer"].startswith("Rank 2 was stuck in all_reduce #12")
    assert body["citations"][0]["kind"] == "dump" and body["citations"][0]["record_id"] == 102


def test_an_archive_upload_goes_through_the_same_path(client: httpx.Client) -> None:
    packed = io.BytesIO()
    with tarfile.open(fileobj=packed, mode="w:gz") as tar:
        for name, data in hang_files(4, (1,)).items():
            info = tarfile.TarInfo(f"run/{name}")
            info.size = len(data)
            tar.addfile(info, io.BytesIO(data))
    response = client.post("/api/diagnoses", files={"file": ("run.tar.gz", packed.getvalue(), "application/gzip")})
    assert response.status_code == 201, response.text
    assert response.json()["diagnosis"]["initiating_ranks"] == [1]


def test_a_single_rank_diagnosis_has_no_timeline(client: httpx.Client) -> None:
    text = "[rank1]: torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB.\n"
    created = client.post("/api/diagnoses", content=text, headers={"Content-Type": "text/plain"}).json()
    assert created["diagnosis"]["initiating_rank"] == 1 and created["timeline_svg"] is None


DROP_DUMPS = """(files) => {
  const transfer = new DataTransfer();
  for (const [name, b64] of files) {
    const bytes = Uint8Array.from(atob(b64), (c) => c.charCodeAt(0));
    transfer.items.add(new File([bytes], name, {type: "application/octet-stream"}));
  }
  return transfer;
}"""


@pytest.mark.browser
@pytest.mark.server
def test_the_page_shows_the_timeline_of_dropped_dumps(browser: object, server: Server, tmp_path: Path) -> None:
    shots = REPO / "docs" / "screenshots" if os.environ.get("DIAGNOSE_UPDATE_SCREENSHOTS") == "1" else tmp_path
    page = browser.new_page(viewport={"width": 1360, "height": 1000}, device_scale_factor=2)  # type: ignore[attr-defined]
    page.goto(server.url + "/")
    files = [[name, base64.b64encode(data).decode()] for name, data in hang_files(16, (9, 14)).items()]
    page.dispatch_event("#drop", "drop", {"dataTransfer": page.evaluate_handle(DROP_DUMPS, files)})
    page.click("#diagnose-button")
    page.wait_for_selector("#workspace:not([hidden])", timeout=60_000)
    assert page.inner_text("#fact-rank") == "9, 14"
    assert page.inner_text("#verdict-id") == "nccl-timeout-hang"
    svg = page.locator("#timeline-card:not([hidden]) #timeline svg")
    svg.wait_for(timeout=10_000)
    labels = svg.locator("text").all_text_contents()
    assert "rank 9" in labels and "rank 14" in labels
    assert svg.get_attribute("role") == "img" and "initiating rank(s) 9, 14" in (svg.get_attribute("aria-label") or "")
    assert "record 109" not in page.inner_text("#evidence") and "pg_status" in page.inner_text("#ev-0")
    page.locator("#timeline-card").screenshot(path=str(shots / "timeline.png"))
    page.close()
