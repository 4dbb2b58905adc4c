// The page: paste or drop a log -> see what was masked -> the diagnosis -> follow-up questions (streamed).
// Plain JavaScript, no build step. Everything shown comes from the API, which holds masked text only.
"use strict";

const $ = (selector) => document.querySelector(selector);
const state = { token: sessionStorage.getItem("diagnose-token"), info: null, files: [], sessionId: null, diagnosis: null };

class ApiError extends Error {
  constructor(message, status) { super(message); this.status = status; }
}

// ---------- small DOM helpers ----------

function el(tag, attrs = {}, ...children) {
  const node = document.createElement(tag);
  for (const [key, value] of Object.entries(attrs)) {
    if (value === null || value === undefined || value === false) continue;
    if (key === "class") node.className = value;
    else if (key === "text") node.textContent = value;
    else if (key.startsWith("on")) node.addEventListener(key.slice(2), value);
    else node.setAttribute(key, value === true ? "" : value);
  }
  for (const child of children.flat()) {
    if (child !== null && child !== undefined) node.append(child);
  }
  return node;
}

// Text with `code` spans, built as DOM nodes (never innerHTML).
function rich(text) {
  const parts = String(text).split(/`([^`]+)`/);
  return parts.map((part, i) => (i % 2 ? el("code", { text: part }) : document.createTextNode(part)));
}

function slug(heading) {
  return heading.toLowerCase().replace(/[^a-z0-9\s-]/g, "").replace(/[\s-]+/g, "-").replace(/^-+|-+$/g, "");
}

function setStatus(text, kind = "info") {
  const status = $("#status");
  status.textContent = text;
  status.dataset.kind = kind;
}

function formatBytes(n) {
  return n < 1024 ? `${n} B` : n < 1 << 20 ? `${(n / 1024).toFixed(1)} KB` : `${(n / (1 << 20)).toFixed(1)} MB`;
}

// ---------- the API ----------

function askToken() {
  const dialog = $("#token-dialog");
  return new Promise((resolve) => {
    dialog.addEventListener("close", () => {
      state.token = $("#token-input").value.trim();
      sessionStorage.setItem("diagnose-token", state.token);
      resolve();
    }, { once: true });
    dialog.showModal();
  });
}

async function api(path, options = {}, retried = false) {
  const headers = new Headers(options.headers || {});
  if (state.token) headers.set("Authorization", `Bearer ${state.token}`);
  const response = await fetch(path, { ...options, headers });
  if (response.status === 401 && !retried) {
    await askToken();
    return api(path, options, true);
  }
  if (!response.ok) {
    let message = `${response.status} ${response.statusText}`;
    try { message = (await response.json()).error || message; } catch { /* not JSON */ }
    throw new ApiError(message, response.status);
  }
  return response;
}

function logRequest() {
  if (state.files.length) {
    const form = new FormData();
    for (const file of state.files) form.append("file", file, file.name);
    return { method: "POST", body: form };
  }
  return {
    method: "POST",
    headers: { "Content-Type": "text/plain; charset=utf-8" },
    body: new Blob([$("#log-text").value], { type: "text/plain;charset=utf-8" }),
  };
}

// Server-sent events over a POST response body (EventSource only does GET).
async function* readEvents(response) {
  const reader = response.body.pipeThrough(new TextDecoderStream()).getReader();
  let buffer = "";
  for (;;) {
    const { value, done } = await reader.read();
    if (done) return;
    buffer += value;
    let cut;
    while ((cut = buffer.indexOf("\n\n")) >= 0) {
      const block = buffer.slice(0, cut);
      buffer = buffer.slice(cut + 2);
      let name = "message";
      let data = "";
      for (const line of block.split("\n")) {
        if (line.startsWith("event:")) name = line.slice(6).trim();
        else if (line.startsWith("data:")) data += line.slice(5).trim();
      }
      yield { name, data: data ? JSON.parse(data) : {} };
    }
  }
}

// ---------- input: paste, drop, choose ----------

function setFiles(files) {
  state.files = Array.from(files);
  const chip = $("#file-chip");
  const text = $("#log-text");
  if (state.files.length) {
    const total = state.files.reduce((sum, f) => sum + f.size, 0);
    const names = state.files.map((f) => f.name).join(", ");
    $("#file-name").textContent = `${names} (${formatBytes(total)})`;
    chip.hidden = false;
    text.hidden = true;
  } else {
    chip.hidden = true;
    text.hidden = false;
    $("#log-file").value = "";
  }
}

function wireIntake() {
  const drop = $("#drop");
  for (const type of ["dragenter", "dragover"]) {
    drop.addEventListener(type, (event) => { event.preventDefault(); drop.classList.add("over"); });
  }
  for (const type of ["dragleave", "drop"]) {
    drop.addEventListener(type, () => drop.classList.remove("over"));
  }
  drop.addEventListener("drop", (event) => {
    event.preventDefault();
    if (event.dataTransfer.files.length) setFiles(event.dataTransfer.files);
    else $("#log-text").value = event.dataTransfer.getData("text/plain");
  });
  $("#file-button").addEventListener("click", () => $("#log-file").click());
  $("#log-file").addEventListener("change", (event) => setFiles(event.target.files));
  $("#file-clear").addEventListener("click", () => { setFiles([]); $("#log-text").focus(); });
  $("#log-form").addEventListener("submit", (event) => { event.preventDefault(); run(); });
  $("#log-text").addEventListener("keydown", (event) => {
    if (event.key === "Enter" && (event.ctrlKey || event.metaKey)) { event.preventDefault(); run(); }
  });
}

// ---------- the flow ----------

function consent() {
  const box = $("#consent");
  box.hidden = false;
  $("#consent-send").focus();
  return new Promise((resolve) => {
    const done = (answer) => () => { box.hidden = true; resolve(answer); };
    $("#consent-send").onclick = done(true);
    $("#consent-cancel").onclick = done(false);
  });
}

async function run() {
  const size = state.files.length ? state.files.reduce((s, f) => s + f.size, 0) : new Blob([$("#log-text").value]).size;
  if (!size || (!state.files.length && !$("#log-text").value.trim())) {
    setStatus("Paste a log or choose a file first.", "error");
    $("#log-text").focus();
    return;
  }
  const limit = state.info ? state.info.max_upload_mb : 50;
  if (size > limit * (1 << 20)) {
    setStatus(`The log is ${formatBytes(size)}; this server takes at most ${limit} MB.`, "error");
    return;
  }
  const button = $("#diagnose-button");
  button.disabled = true;
  try {
    setStatus("Masking secrets…");
    const counts = await (await api("/api/redactions", logRequest())).json();
    showMasked(counts);
    if (state.info && state.info.model) {
      setStatus(`Nothing has been sent to ${state.info.model} yet.`);
      if (!(await consent())) { setStatus("Cancelled: nothing was sent to the model."); return; }
    }
    setStatus("Diagnosing…");
    const created = await (await api("/api/diagnoses", logRequest())).json();
    state.sessionId = created.session_id;
    state.diagnosis = created.diagnosis;
    showDiagnosis(created.diagnosis);
    if (window.diagnoseTimeline) window.diagnoseTimeline.show(created.timeline_svg);  // timeline.js
    setStatus("");
    $("#verdict-title").focus();
  } catch (error) {
    setStatus(error.message, "error");
  } finally {
    button.disabled = false;
  }
}

function showMasked(counts) {
  const list = $("#masked-counts");
  list.replaceChildren(...Object.entries(counts.by_type).sort((a, b) => b[1] - a[1])
    .map(([kind, n]) => el("li", { class: "chip mask" }, el("span", { class: "mask-kind", text: `<${kind}>` }), ` ${n}`)));
  $("#masked-total").textContent = counts.total === 1 ? "1 value" : `${counts.total} values`;
  const model = state.info && state.info.model;
  $("#masked-note").textContent = counts.total
    ? `These values were replaced by placeholders such as <HOST_1> before the log was read${model ? "" : "; rules only: nothing leaves this server"}.`
    : "Nothing needed masking.";
  $("#masked").hidden = false;
}

function evidenceAnchor(file, line) {
  const index = (state.diagnosis.evidence || []).findIndex((e) => e.file === file && e.line === line);
  return index >= 0 ? `ev-${index}` : null;
}

function showDiagnosis(d) {
  const unknown = d.root_cause.id === "unknown";
  $("#verdict").classList.toggle("unknown", unknown);
  $("#verdict-title").textContent = d.root_cause.title;
  const idLink = $("#verdict-id");
  idLink.textContent = d.root_cause.id;
  idLink.href = `/kb/${encodeURIComponent(d.root_cause.id)}`;
  $("#verdict-confidence").textContent = `confidence ${Math.round(d.root_cause.confidence * 100)}%`;
  $("#fact-rank").textContent = (d.initiating_ranks || []).length > 1 ? d.initiating_ranks.join(", ") : d.initiating_rank ?? "not shown in the log";
  $("#fact-host").textContent = d.initiating_host ?? "—";
  $("#fact-backend").textContent = d.backend === "rules" ? "rules (no model)" : d.backend;
  $("#verdict-mechanism").replaceChildren(...rich(d.mechanism || ""));

  $("#evidence").replaceChildren(...d.evidence.map((e, i) =>
    el("li", { id: `ev-${i}`, class: "evline", tabindex: "-1" },
      el("div", { class: "evhead" },
        el("span", { class: "lineno", text: e.kind === "dump" ? (e.record_id !== null ? `record ${e.record_id}` : "pg_status") : `line ${e.line}` }),
        el("span", { class: "file", text: e.file }),
        e.rank !== null ? el("span", { class: "rank", text: `rank ${e.rank}` }) : null),
      el("pre", {}, el("code", { text: e.text })))));

  $("#collateral-card").hidden = !d.collateral.length;
  $("#collateral").replaceChildren(...d.collateral.map((c) =>
    el("li", {},
      el("div", { class: "ranks" }, ...c.ranks.map((r) => el("span", { class: "rank", text: `rank ${r}` }))),
      el("p", {}, el("a", { href: `/kb/${encodeURIComponent(c.id)}`, text: c.summary }),
        el("span", { class: "muted small", text: ` · ${c.count} line${c.count === 1 ? "" : "s"} · ${c.id}` })))));

  $("#fix").replaceChildren(...d.fix.map((step) => el("li", {}, ...rich(step))));
  $("#verify-card").hidden = !d.verify.length;
  $("#verify").replaceChildren(...d.verify.map((command, i) =>
    el("li", { class: "command" },
      el("code", { id: `cmd-${i}`, text: command }),
      el("button", { type: "button", class: "button secondary small copy", "aria-label": `Copy command ${i + 1}`,
        onclick: (event) => copy(command, event.currentTarget) }, "Copy"))));
  $("#next-card").hidden = !d.next_run.length;
  $("#next-run").replaceChildren(...d.next_run.map((item) => el("li", {}, ...rich(item))));
  const others = d.candidates.filter((c) => c.id !== d.root_cause.id);
  $("#candidates").replaceChildren(...others.map((c) =>
    el("li", {}, el("a", { class: "chip", href: `/kb/${encodeURIComponent(c.id)}`, text: `${c.id} · ${c.score.toFixed(2)}` }))));
  $("#notes").replaceChildren(...d.notes.map((note) => el("li", { text: note })));
  $("#more-card").hidden = !others.length && !d.notes.length;

  showSuggestions(d);
  $("#messages").replaceChildren();
  $(".report").prepend($("#masked"));
  $("#intake").classList.add("collapsed");
  $("#workspace").hidden = false;
}

async function copy(text, button) {
  try {
    await navigator.clipboard.writeText(text);
    button.textContent = "Copied";
  } catch {
    button.textContent = "Select and copy";
  }
  setTimeout(() => { button.textContent = "Copy"; }, 1500);
}

// ---------- chat ----------

function showSuggestions(d) {
  const questions = [];
  if (d.initiating_rank !== null) questions.push(`Why rank ${d.initiating_rank}?`);
  if (d.root_cause.id !== "unknown") questions.push("Is it the hardware or my code?", "How do I fix it?", "How do I verify the fix?");
  questions.push("What else could it be?", "What should I log next time?");
  $("#suggestions").replaceChildren(...questions.map((q) =>
    el("li", {}, el("button", { type: "button", class: "chip suggestion", onclick: () => ask(q) }, q))));
}

function citationItem(c) {
  if (c.kind === "kb") {
    const section = c.section ? ` › ${c.section}` : "";
    const href = `/kb/${encodeURIComponent(c.entry_id)}${c.section ? `#${slug(c.section)}` : ""}`;
    return el("li", { class: "cite kb" }, el("a", { href }, el("span", { class: "cite-kind", text: "kb" }), `${c.entry_id}${section}`));
  }
  const where = c.kind === "dump" ? `${c.file} ${c.record_id !== null && c.record_id !== undefined ? `record ${c.record_id}` : "pg_status"}` : `${c.file}:${c.line}`;
  const label = `${where}${c.rank !== null && c.rank !== undefined ? ` · rank ${c.rank}` : ""}`;
  const anchor = evidenceAnchor(c.file, c.line);
  const head = anchor
    ? el("a", { href: `#${anchor}`, onclick: () => flash(anchor) }, el("span", { class: "cite-kind", text: "log" }), label)
    : el("span", {}, el("span", { class: "cite-kind", text: "log" }), label);
  return el("li", { class: "cite log" }, head, el("code", { class: "snippet", text: c.text.trim().slice(0, 160) }));
}

function flash(anchor) {
  const line = document.getElementById(anchor);
  line.classList.remove("flash");
  void line.offsetWidth;
  line.classList.add("flash");
  line.focus({ preventScroll: true });
}

// Keep the newest message in view by scrolling the conversation only, never the page.
function scrollChat() {
  const list = $("#messages");
  list.scrollTop = list.scrollHeight;
}

function addMessage(role, text) {
  const body = el("div", { class: "bubble" }, ...rich(text));
  const item = el("li", { class: `message ${role}` }, el("span", { class: "sr-only", text: role === "user" ? "You:" : "Answer:" }), body);
  $("#messages").append(item);
  scrollChat();
  return { item, body };
}

async function ask(question) {
  if (!question.trim() || !state.sessionId) return;
  const button = $("#ask-button");
  button.disabled = true;
  $("#chat").setAttribute("aria-busy", "true");
  addMessage("user", question);
  const { item, body } = addMessage("assistant", "");
  item.classList.add("streaming");
  let text = "";
  try {
    const response = await api(`/api/sessions/${encodeURIComponent(state.sessionId)}/messages`, {
      method: "POST",
      headers: { "Content-Type": "application/json", Accept: "text/event-stream" },
      body: JSON.stringify({ content: question }),
    });
    for await (const event of readEvents(response)) {
      if (event.name === "delta") {
        text += event.data.text;
        body.replaceChildren(...rich(text));
        scrollChat();
      } else if (event.name === "answer") {
        body.replaceChildren(...rich(event.data.answer));
        if (!event.data.grounded) item.classList.add("ungrounded");
        if (event.data.citations.length) {
          item.append(el("ul", { class: "citations", "aria-label": "Sources" }, ...event.data.citations.slice(0, 8).map(citationItem)));
        }
      } else if (event.name === "error") {
        throw new ApiError(event.data.error, event.data.status);
      }
    }
  } catch (error) {
    item.classList.add("failed");
    body.textContent = error.status === 404 ? "This session has expired: diagnose the log again." : error.message;
  } finally {
    item.classList.remove("streaming");
    $("#chat").removeAttribute("aria-busy");
    button.disabled = false;
    scrollChat();
  }
}

function wireChat() {
  const input = $("#question");
  $("#chat-form").addEventListener("submit", (event) => {
    event.preventDefault();
    const question = input.value;
    input.value = "";
    ask(question);
  });
  input.addEventListener("keydown", (event) => {
    if (event.key === "Enter" && !event.shiftKey) { event.preventDefault(); $("#chat-form").requestSubmit(); }
  });
  $("#new-log").addEventListener("click", () => {
    if (state.sessionId) api(`/api/sessions/${encodeURIComponent(state.sessionId)}`, { method: "DELETE" }).catch(() => {});
    state.sessionId = null;
    state.diagnosis = null;
    $("#workspace").hidden = true;
    $("#masked").hidden = true;
    $("#status").after($("#masked"));
    $("#intake").classList.remove("collapsed");
    setFiles([]);
    $("#log-text").value = "";
    $("#log-text").focus();
  });
}

async function loadInfo() {
  try {
    state.info = await (await api("/api/info")).json();
  } catch (error) {
    setStatus(`Cannot reach the server: ${error.message}`, "error");
  }
}

wireIntake();
wireChat();
loadInfo();
