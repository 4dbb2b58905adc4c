"""End to end in a real headless Chromium (Debian's, driven by playwright; no browser download).

Paste the multi-rank log, see what was masked, the root cause and the rank; ask a follow-up with the
keyboard and watch the answer stream in; follow a citation to the encyclopedia. Screenshots go to
tmp_path, or to docs/screenshots when DIAGNOSE_UPDATE_SCREENSHOTS=1.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from tests.fake_openai import FakeOpenAI

from .conftest import EXAMPLE_OOM, REPO, TOKEN, Server, running_server
from .samples import SECRETS, fake_model, planted_log

pytestmark = [pytest.mark.browser, pytest.mark.server]


@pytest.fixture
def shots(tmp_path: Path) -> Path:
    if os.environ.get("DIAGNOSE_UPDATE_SCREENSHOTS") == "1":
        target = REPO / "docs" / "screenshots"
        target.mkdir(parents=True, exist_ok=True)
        return target
    return tmp_path


# Counts how many times the answer bubble changed while it was streaming.
WATCH_STREAM = """() => {
  window.__updates = 0;
  new MutationObserver(() => {
    const live = document.querySelector('.message.assistant.streaming .bubble');
    if (live && live.textContent) window.__updates += 1;
  }).observe(document.querySelector('#messages'), {subtree: true, childList: true, characterData: true});
}"""


def test_paste_diagnose_and_ask(browser: object, server: Server, shots: Path) -> None:
    page = browser.new_page(viewport={"width": 1360, "height": 900})  # type: ignore[attr-defined]
    page.goto(server.url + "/")
    page.fill("#log-text", EXAMPLE_OOM.read_text(encoding="utf-8"))
    page.focus("#log-text")
    page.keyboard.press("Control+Enter")

    masked = page.locator("#masked-counts")
    masked.wait_for()
    assert "<TOKEN>" in masked.inner_text() and "<HOST>" in masked.inner_text()
    page.wait_for_selector("#workspace:not([hidden])", timeout=60_000)
    assert page.inner_text("#verdict-title") == "GPU out of memory"
    assert page.inner_text("#verdict-id") == "cuda-oom"
    assert page.inner_text("#fact-rank") == "5"
    evidence = page.locator("#ev-0")
    assert "line 203" in evidence.inner_text() and "rank 5" in evidence.inner_text()
    assert "CUDA out of memory" in evidence.inner_text()
    assert page.locator("#collateral li").count() >= 1
    assert page.locator("#verify .copy").count() == page.locator("#verify li").count() > 0
    page.screenshot(path=str(shots / "diagnosis.png"), full_page=True)

    page.evaluate(WATCH_STREAM)
    page.focus("#question")
    page.keyboard.type("Why did rank 5 fail first?")
    page.keyboard.press("Enter")
    page.wait_for_selector(".message.assistant:not(.streaming) .citations", timeout=60_000)
    answer = page.locator(".message.assistant .bubble").last.inner_text()
    assert answer.startswith("Rank 5 is where the failure started")
    assert page.evaluate("window.__updates") > 3  # it arrived piece by piece
    assert page.locator(".message.assistant .citations a[href='#ev-0']").count() == 1

    page.click("text=Is it the hardware or my code?")
    page.locator(".message.assistant:not(.streaming) .citations").nth(1).wait_for(timeout=60_000)
    assert "hardware" in page.locator(".message.assistant .bubble").last.inner_text()
    kb_link = page.locator(".message.assistant .citations a[href^='/kb/cuda-oom#']").first
    href = str(kb_link.get_attribute("href"))  # which section the offline answer cites is the chat's choice
    anchor = href.split("#", 1)[1]
    assert anchor in {"what-it-is", "why-it-happens", "how-to-confirm"}, href
    page.screenshot(path=str(shots / "chat.png"))

    kb_link.click()
    page.wait_for_url(f"**{href}")
    assert page.inner_text("h1") == "GPU out of memory"
    assert page.locator(f"#{anchor} h2").count() == 1
    page.close()


DROP_FILE = """(text) => {
  const transfer = new DataTransfer();
  transfer.items.add(new File([text], "rank5.log", {type: "text/plain"}));
  return transfer;
}"""


def test_drop_a_file_and_copy_a_command(browser: object, server: Server) -> None:
    context = browser.new_context(permissions=["clipboard-read", "clipboard-write"])  # type: ignore[attr-defined]
    page = context.new_page()
    page.goto(server.url + "/")
    transfer = page.evaluate_handle(DROP_FILE, EXAMPLE_OOM.read_text(encoding="utf-8"))
    page.dispatch_event("#drop", "drop", {"dataTransfer": transfer})
    assert "rank5.log" in page.inner_text("#file-name")
    page.click("#diagnose-button")
    page.wait_for_selector("#workspace:not([hidden])", timeout=60_000)
    assert "rank5.log" in page.inner_text("#ev-0")  # sent as a multipart file, under its own name
    first_command = page.inner_text("#cmd-0")
    page.click("#verify .copy >> nth=0")
    page.locator("#verify .copy", has_text="Copied").wait_for(timeout=5_000)
    assert page.evaluate("navigator.clipboard.readText()") == first_command
    context.close()


def test_phone_width_has_no_sideways_scroll(browser: object, server: Server, shots: Path) -> None:
    page = browser.new_page(
        viewport={"width": 390, "height": 844},
        is_mobile=True,
        has_touch=True,  # type: ignore[attr-defined]
        color_scheme="dark",
    )
    page.goto(server.url + "/")
    page.fill("#log-text", EXAMPLE_OOM.read_text(encoding="utf-8"))
    page.click("#diagnose-button")
    page.wait_for_selector("#workspace:not([hidden])", timeout=60_000)
    assert page.evaluate("document.documentElement.scrollWidth") <= 390
    page.screenshot(path=str(shots / "phone.png"))
    page.goto(server.url + "/kb/cuda-oom")
    assert page.evaluate("document.documentElement.scrollWidth") <= 390
    page.close()


def test_keyboard_reaches_every_control(browser: object, server: Server) -> None:
    page = browser.new_page(viewport={"width": 1280, "height": 800})  # type: ignore[attr-defined]
    page.goto(server.url + "/")
    reached = []
    for _ in range(12):
        page.keyboard.press("Tab")
        reached.append(page.evaluate("document.activeElement.id || document.activeElement.textContent.trim()"))
    assert {"log-text", "file-button", "diagnose-button"} <= set(reached)
    page.close()


def test_nothing_reaches_the_model_before_the_user_agrees(browser: object, tmp_path: Path) -> None:
    with FakeOpenAI() as fake:
        fake.default_reply = fake_model
        with running_server(tmp_path, DIAGNOSE_MODEL="openai/fake-page", DIAGNOSE_API_BASE=fake.api_base) as server:
            page = browser.new_page(viewport={"width": 1280, "height": 800})  # type: ignore[attr-defined]
            page.goto(server.url + "/")
            page.fill("#log-text", planted_log())
            page.click("#diagnose-button")
            page.locator("#consent-send").wait_for()
            assert "<TOKEN>" in page.inner_text("#masked-counts")
            assert "Nothing has been sent to openai/fake-page" in page.inner_text("#status")
            page.click("#consent-cancel")
            assert "nothing was sent" in page.inner_text("#status")
            assert fake.requests == []

            page.click("#diagnose-button")
            page.locator("#consent-send").wait_for()
            assert fake.requests == []
            page.keyboard.press("Enter")  # the consent button has the focus
            page.wait_for_selector("#workspace:not([hidden])", timeout=60_000)
            assert page.inner_text("#fact-backend") == "openai/fake-page"
            assert page.inner_text("#fact-rank") == "5"
            page.close()
    assert len(fake.requests) == 1
    sent = fake.sent_text()
    assert [secret for secret in SECRETS if secret in sent] == []


def test_the_page_asks_for_the_api_token(browser: object, tmp_path: Path) -> None:
    with running_server(tmp_path, DIAGNOSE_API_TOKEN=TOKEN) as server:
        page = browser.new_page(viewport={"width": 1280, "height": 800})  # type: ignore[attr-defined]
        page.goto(server.url + "/")
        page.locator("#token-dialog[open]").wait_for()
        page.fill("#token-input", TOKEN)
        page.keyboard.press("Enter")
        page.fill("#log-text", EXAMPLE_OOM.read_text(encoding="utf-8"))
        page.click("#diagnose-button")
        page.wait_for_selector("#workspace:not([hidden])", timeout=60_000)
        assert page.inner_text("#verdict-id") == "cuda-oom"
        assert page.evaluate("sessionStorage.getItem('diagnose-token')") == TOKEN
        page.close()
