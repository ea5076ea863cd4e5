// The viewer's pages: they read the viewer's JSON API and build the DOM
// with textContent only, so no payload (user data) is ever parsed as HTML.
"use strict";

function el(tag, props, ...children) {
  const e = document.createElement(tag);
  for (const [k, v] of Object.entries(props || {})) {
    if (k === "class") e.className = v;
    else if (k === "text") e.textContent = v;
    else if (k.startsWith("on")) e.addEventListener(k.slice(2), v);
    else e.setAttribute(k, v);
  }
  for (const c of children) e.append(c);
  return e;
}

function statusBadge(s) { return el("span", { class: "status status-" + s, text: s }); }
function fmtTime(t) { return t ? new Date(t).toLocaleString() : ""; }
function terminal(s) { return s === "completed" || s === "failed" || s === "cancelled"; }

function showError(msg) {
  const p = document.getElementById("error");
  p.textContent = msg;
  p.hidden = !msg;
}

async function getJSON(url) {
  const resp = await fetch(url, { headers: { Accept: "application/json" } });
  if (!resp.ok) throw new Error(resp.status + " " + (await resp.text()));
  return resp.json();
}

// poll calls load until it returns "done", pausing 1 s after a change and
// doubling the pause (up to 15 s) while nothing changes: a page left open
// costs the World little.
function poll(load) {
  let pause = 1000, last = "";
  const live = document.getElementById("live");
  async function tick() {
    let state;
    try {
      state = await load();
      showError("");
    } catch (err) {
      showError(String(err.message || err));
    }
    if (state === "done") { live.textContent = ""; return; }
    if (state !== undefined && state !== last) { pause = 1000; last = state; } else { pause = Math.min(pause * 2, 15000); }
    live.textContent = "live · next check in " + Math.round(pause / 1000) + " s";
    setTimeout(tick, pause);
  }
  tick();
}

// ---- the run list

function runsPage() {
  const form = document.getElementById("filters");
  const params = new URLSearchParams(location.search);
  for (const name of ["workflow", "status", "attr"]) form.elements[name].value = params.get(name) || "";
  const tbody = document.querySelector("#runs tbody");
  const more = document.getElementById("more");
  let cursor = "";
  async function load(append) {
    const q = new URLSearchParams();
    for (const name of ["workflow", "status", "attr"]) if (params.get(name)) q.set(name, params.get(name));
    if (append) q.set("cursor", cursor);
    const page = await getJSON("api/runs?" + q);
    if (!append) tbody.replaceChildren();
    for (const r of page.runs) {
      const attrs = Object.entries(r.attributes || {}).map(([k, v]) => k + "=" + v).join(" ");
      tbody.append(el("tr", { "data-run": r.id },
        el("td", {}, el("a", { href: "run.html?id=" + encodeURIComponent(r.id), text: r.id })),
        el("td", { text: r.workflow }), el("td", {}, statusBadge(r.status)),
        el("td", { text: fmtTime(r.createdAt) }), el("td", { text: fmtTime(r.updatedAt) }),
        el("td", { text: String(r.lastSlot) }), el("td", { text: attrs })));
    }
    cursor = page.next;
    more.hidden = !cursor;
    return page.runs.map(r => r.id + r.status + r.lastSlot).join();
  }
  more.addEventListener("click", () => load(true).catch(e => showError(e.message)));
  poll(() => load(false));
}

// ---- a run

function pretty(v) {
  if (v === undefined || v === null) return "(none)";
  return JSON.stringify(v, null, 2);
}

// errorChain renders an error record and every cause under it.
function errorChain(rec) {
  const box = el("div", { class: "error-chain" });
  let parent = box;
  for (let r = rec; r; r = r.cause) {
    const head = [r.type, r.kind, r.step && "step " + r.step, r.attempts && r.attempts + " attempts"].filter(Boolean).join(" · ");
    const node = el("div", { class: "cause" }, el("strong", { class: "error", text: r.message || "(no message)" }));
    if (head) node.append(el("div", { class: "muted", text: head }));
    if (r.data !== undefined) node.append(el("pre", { text: pretty(r.data) }));
    if (r.stack) node.append(el("pre", { text: r.stack }));
    parent.append(node);
    parent = node;
  }
  return box;
}

function showDetail(title, ev) {
  document.getElementById("detail").hidden = false;
  document.getElementById("detail-title").textContent = title;
  const body = document.getElementById("detail-body");
  body.replaceChildren();
  if (!ev) { body.textContent = "(no event)"; return; }
  body.append(el("div", { class: "muted", text: "slot " + ev.slot + " · " + ev.type + " · " + fmtTime(ev.createdAt) }));
  if (ev.payload && ev.payload.error) body.append(errorChain(ev.payload.error));
  body.append(el("code", { text: pretty(ev.payload) }));
}

function drawTimeline(data) {
  const box = document.getElementById("timeline");
  const events = data.events;
  if (!events.length) { box.replaceChildren(el("p", { class: "muted", text: "no events yet" })); return; }
  const bySlot = new Map(events.map(e => [e.slot, e]));
  const t0 = Date.parse(events[0].createdAt);
  let tEnd = Date.parse(events[events.length - 1].createdAt);
  if (!terminal(data.run.status)) tEnd = Math.max(tEnd, Date.parse(data.now));
  const width = Math.max(tEnd - t0, 1);
  const pct = t => Math.min(100, Math.max(0, (t - t0) / width * 100));
  const rows = data.rows.map(r => {
    const lane = el("div", { class: "lane" });
    for (const s of r.spans) {
      const start = Date.parse(s.start);
      const end = s.end ? Math.min(Date.parse(s.end), tEnd) : tEnd;
      const bar = el("div", { class: "bar bar-" + s.status, title: s.label + " · " + s.status + " · " + (end - start) + " ms", text: s.label,
        onclick: () => showDetail(r.label + " · " + s.label, bySlot.get(s.slot)) });
      bar.style.left = pct(start) + "%";
      bar.style.width = (pct(end) - pct(start)) + "%";
      lane.append(bar);
    }
    for (const m of r.marks || []) {
      const mk = el("div", { class: "mark", title: m.label + " · " + fmtTime(m.at), onclick: () => showDetail(r.label + " · " + m.label, bySlot.get(m.slot)) });
      mk.style.left = pct(Date.parse(m.at)) + "%";
      lane.append(mk);
    }
    const label = el("div", { class: "label", title: r.label }, el("span", { class: "kind", text: r.kind }));
    if (r.child) label.append(el("a", { href: "run.html?id=" + encodeURIComponent(r.child), text: r.label }));
    else label.append(r.label);
    if (r.heartbeat) {
      const hb = r.heartbeat;
      const said = hb.sealed ? " · (encrypted)" : hb.details !== undefined ? " · " + JSON.stringify(hb.details) : "";
      label.append(el("span", { class: "heartbeat", title: "last heartbeat of attempt " + hb.attempt, text: "♥ " + fmtTime(hb.at) + said }));
    }
    return el("div", { class: "row", "data-kind": r.kind, "data-status": r.status, "data-spans": String(r.spans.length) }, label, lane);
  });
  const axis = el("div", { class: "row axis" }, el("div", { class: "label muted", text: fmtTime(events[0].createdAt) }),
    el("div", { class: "lane" }, el("span", { class: "muted", text: "0 s" }), el("span", { class: "muted end", text: "+" + (width / 1000).toFixed(1) + " s" })));
  box.replaceChildren(axis, ...rows);
}

// drawSource shows a dynamic run's stored code, numbered as its errors
// cite lines (workflow.star:LINE:COL).
function drawSource(r) {
  const box = document.getElementById("source");
  box.replaceChildren();
  if (r.sourceError) box.append(el("h2", { text: "Workflow code" }), el("p", { class: "error", text: r.sourceError }));
  if (!r.source) return;
  const steps = Object.entries(r.source.steps || {}).map(([a, s]) => a + "=" + s).join(" ");
  const lines = r.source.code.replace(/\n$/, "").split("\n").map((l, i) => String(i + 1).padStart(4) + "  " + l).join("\n");
  box.append(el("h2", { text: "Workflow code" }),
    el("p", { class: "muted", text: "sha256:" + r.source.sha256 + (steps ? " · steps: " + steps : "") }),
    el("pre", { text: lines }));
}

function drawRun(data) {
  const r = data.run;
  document.getElementById("run-id").textContent = r.id;
  document.title = r.id + " · " + r.workflow;
  const dl = document.getElementById("summary");
  dl.replaceChildren();
  const add = (k, v) => dl.append(el("dt", { text: k }), el("dd", {}, v));
  add("workflow", r.workflow);
  add("status", statusBadge(r.status));
  add("created", fmtTime(r.createdAt));
  add("updated", fmtTime(r.updatedAt));
  if (r.attributes) add("attributes", Object.entries(r.attributes).map(([k, v]) => k + "=" + v).join(" "));
  if (r.input !== undefined) add("input", pretty(r.input));
  if (r.output !== undefined) add("output", pretty(r.output));
  if (data.unreadable) add("payloads", data.unreadable);
  drawSource(r);
  const runErr = document.getElementById("run-error");
  runErr.replaceChildren();
  if (r.error) runErr.append(el("h2", { text: "Error" }), errorChain(r.error));
  document.getElementById("cancel-box").hidden = !(data.canCancel && !terminal(r.status));
  drawTimeline(data);
  const tbody = document.querySelector("#events tbody");
  tbody.replaceChildren(...data.events.map(ev => el("tr", {},
    el("td", { text: String(ev.slot) }),
    el("td", { text: "+" + (Date.parse(ev.createdAt) - Date.parse(data.events[0].createdAt)) + " ms" }),
    el("td", { text: ev.type }), el("td", { text: ev.correlationId || "" }),
    el("td", { class: "payload", text: ev.payload === undefined ? "" : JSON.stringify(ev.payload), onclick: () => showDetail(ev.type, ev) }))));
}

function runPage() {
  const id = new URLSearchParams(location.search).get("id") || "";
  document.getElementById("cancel").addEventListener("click", async () => {
    if (!confirm("Cancel run " + id + "?")) return;
    const body = new FormData();
    body.set("id", id);
    body.set("reason", document.getElementById("cancel-reason").value);
    const resp = await fetch("api/cancel", { method: "POST", body });
    if (!resp.ok) showError("cancel: " + resp.status + " " + (await resp.text()));
  });
  poll(async () => {
    const data = await getJSON("api/run?id=" + encodeURIComponent(id));
    drawRun(data);
    return terminal(data.run.status) ? "done" : data.run.status + data.run.lastSlot;
  });
}

if (document.body.dataset.page === "runs") runsPage(); else runPage();
