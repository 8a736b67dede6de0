// Live page updates over Channels websockets (issue 5): the agent, session and canvas pages follow
// what the watcher or the push stream ingests, without reloading. No-op on pages of no agent.
import { t } from "./ui-text.js";

const body = document.body;
const agent = body.dataset.liveAgent;

// the websocket and what each message swaps, on a page of an agent
function follow() {
  const canvas = body.dataset.liveCanvas || "";
  const path = location.pathname;
  const sessionMatch = /\/a\/[^/]+\/s\/([^/]+)\/$/.exec(path);
  const session = sessionMatch ? decodeURIComponent(sessionMatch[1]) : "";
  const isAgentPage = /^\/a\/[^/]+\/$/.test(path);

  let socket = null;
  let attempts = 0;
  let everConnected = false;
  let openNodeUrl = null;
  let keepViewNext = false;
  const timers = {};
  body.dataset.liveMessages = "0";

  // --- status badge -----------------------------------------------------------------------
  const badge = document.createElement("span");
  badge.id = "live-status";
  badge.setAttribute("role", "status");
  badge.style.cssText = "margin-left:.75em;font-size:.8em;padding:.1em .5em;border-radius:1em;white-space:nowrap";
  (document.querySelector("header.topbar") || body).appendChild(badge);
  function status(state, text) {
    body.dataset.liveState = state;
    badge.dataset.state = state;
    badge.textContent = text;
    badge.title = state === "live" ? t("live-title") : t("paused-title");
    badge.style.background = state === "live" ? "#d8f5dd" : "#fde2e2";
    badge.style.color = state === "live" ? "#17692a" : "#8a1f11";
  }
  status("connecting", "○ " + t("connecting"));

  // --- helpers ----------------------------------------------------------------------------
  function later(key, fn, wait) {
    // Coalesce bursts: one refresh per region per `wait` ms, carrying the latest state.
    if (timers[key]) return;
    timers[key] = setTimeout(() => { delete timers[key]; fn(); }, wait || 250);
  }
  function focusedIn(el) {
    return !!(el && document.activeElement && el.contains(document.activeElement) &&
      document.activeElement.matches("input, textarea, select, [contenteditable]"));
  }
  async function refreshFromPage(selectors) {
    // Fetch this page whole (no HX-Request: the full template) and swap the listed regions.
    const response = await fetch(location.href, { headers: { Accept: "text/html" }, credentials: "same-origin" });
    if (!response.ok) return;
    const doc = new DOMParser().parseFromString(await response.text(), "text/html");
    for (const selector of selectors) {
      const current = document.querySelector(selector);
      const fresh = doc.querySelector(selector);
      if (!current || !fresh || focusedIn(current)) continue;
      current.replaceWith(fresh);
      if (window.htmx) htmx.process(fresh);
    }
    body.dispatchEvent(new CustomEvent("memviz:live-refreshed", { detail: { selectors } }));
  }
  function banner(text) {
    let el = document.getElementById("live-banner");
    if (!el) {
      el = document.createElement("div");
      el.id = "live-banner";
      el.className = "warn banner";
      el.setAttribute("role", "alert");
      const main = document.querySelector("main");
      main.insertBefore(el, main.firstChild);
    }
    el.innerHTML = "";
    el.append(text + " ");
    const reload = document.createElement("a");
    reload.href = location.href;
    reload.textContent = t("reload");
    el.append(reload);
  }

  // --- canvas page --------------------------------------------------------------------------
  function editing() {
    if (document.querySelector("[data-editing]")) return true;
    const panel = document.getElementById("edit-panel") || document.getElementById("editor");
    if (focusedIn(panel)) return true;
    return !!(panel && panel.querySelector("form.op-form:not([hidden]), dialog[open] form"));
  }
  function refreshDiagram() {
    const diagram = document.getElementById("diagram");
    if (!diagram || !window.htmx) return;
    const base = diagram.dataset.canvasUrl || location.pathname;
    const collapsed = diagram.dataset.collapsed || "";
    diagram.dataset.keepView = "1";
    keepViewNext = true;
    // `source` gives each region its own htmx request queue: without it every htmx.ajax call
    // comes from <body>, and htmx drops a request while another from the same element runs.
    htmx.ajax("GET", base + "?collapsed=" + encodeURIComponent(collapsed), { source: diagram, target: diagram, swap: "outerHTML" });
  }
  function refreshNodePanel() {
    const panel = document.getElementById("node-panel");
    if (openNodeUrl && panel && window.htmx) {
      htmx.ajax("GET", openNodeUrl, { source: panel, target: panel, swap: "innerHTML" });
    }
  }
  function refreshLiveBox() {
    const box = document.getElementById("live");
    if (box && box.getAttribute("hx-get") && window.htmx) {
      htmx.ajax("GET", box.getAttribute("hx-get"), { source: box, target: box, swap: "outerHTML" });
    }
  }
  function refreshEditor() {
    // The canvas editor (diagram, node list, base hash of edits) is swapped whole so the next
    // edit is based on the text now on disk; the canvas URL answers an htmx request aimed at
    // #editor with that region alone.
    const editor = document.getElementById("editor");
    if (!editor || !window.htmx) return false;
    keepViewNext = true;
    htmx.ajax("GET", location.pathname + location.search, { source: editor, target: editor, swap: "outerHTML" })
      .then(() => {
        document.dispatchEvent(new CustomEvent("memviz:editor-refreshed")); // canvas.js marks its selection again
        refreshNodePanel();
      });
    return true;
  }
  function shownHash() {
    const editor = document.getElementById("editor");
    return editor ? editor.dataset.hash : "";
  }
  let latestCanvasMsg = null;
  function canvasUpdated(msg) {
    body.dataset.liveCanvasRevision = String(msg.revision || "");
    if (msg.hash && msg.hash === shownHash()) return; // this page made (or already shows) it
    latestCanvasMsg = msg;
    // Decided when the timer fires, on the newest message: this page's own edit is broadcast
    // before its HTTP answer (with the new hash) arrives, and must not redraw the page again.
    later("canvas", () => {
      const m = latestCanvasMsg;
      if (m.hash && m.hash === shownHash()) return;
      refreshLiveBox();
      if (editing()) {
        // Never swap a form the user is filling in; say what happened instead.
        const values = { author: m.author, revision: m.revision };
        banner(!m.author || m.author === "agent"
          ? t("agent-rewrote", values)
          : t("user-changed", values));
        return;
      }
      if (!refreshEditor()) {
        refreshDiagram();
        refreshNodePanel();
        refreshFromPage([".canvas-head", ".node-list"]);
      }
    });
  }

  if (window.htmx) {
    htmx.on("htmx:beforeRequest", (ev) => {
      const target = ev.detail.target;
      if (target && target.id === "node-panel") openNodeUrl = ev.detail.requestConfig.path;
    });
    htmx.on("htmx:beforeSwap", (ev) => {
      // Keep the user's pan/zoom across a live re-render of the diagram.
      const target = ev.detail.target;
      if (keepViewNext && target && (target.id === "diagram" || target.id === "editor") && typeof ev.detail.serverResponse === "string") {
        ev.detail.serverResponse = ev.detail.serverResponse.replace('id="diagram"', 'id="diagram" data-keep-view="1"');
        keepViewNext = false;
      }
    });
  }

  // --- messages -----------------------------------------------------------------------------
  function refreshAll() {
    if (canvas) canvasUpdated({ revision: "" });
    else if (session) later("session", () => refreshFromPage([".page-head", "#timeline"]));
    else if (isAgentPage) later("agent", () => refreshFromPage(["main"]), 400);
  }
  function agentChanged(msg) {
    const rows = msg.rows || {};
    const anyRows = Object.keys(rows).length > 0 || (msg.sessions_reread || []).length > 0;
    if (canvas) {
      // Row counts per node and the open node's rows.
      // The live box too: it lists dropped rows the agent re-marked (spec §4.8.5).
      if (anyRows) { later("node-panel", refreshNodePanel); later("node-list", () => refreshFromPage([".node-list"])); later("live-box", refreshLiveBox); }
      if (msg.active_canvas !== null && msg.active_canvas !== undefined) later("canvas-head", () => refreshFromPage([".canvas-head"]));
    } else if (session) {
      const touched = rows[session] || (msg.sessions_reread || []).includes(session) || (msg.sessions_removed || []).includes(session);
      if (touched) later("session", () => refreshFromPage([".page-head", "#timeline"]));
    } else if (isAgentPage) {
      if (focusedIn(document.querySelector("main"))) banner(t("new-memory"));
      else later("agent", () => refreshFromPage(["main"]), 400);
    }
  }
  function handle(msg) {
    body.dataset.liveMessages = String(Number(body.dataset.liveMessages) + 1);
    if (msg.type === "live.ready") {
      if (everConnected) refreshAll(); // we may have missed changes while disconnected
      everConnected = true;
    } else if (msg.type === "agent.changed") agentChanged(msg);
    else if (msg.type === "canvas.updated" && msg.canvas === canvas) canvasUpdated(msg);
    body.dispatchEvent(new CustomEvent("memviz:live", { detail: msg }));
  }

  function connect() {
    const proto = location.protocol === "https:" ? "wss:" : "ws:";
    let url = `${proto}//${location.host}/ws/live/${encodeURIComponent(agent)}/`;
    if (canvas) url += "?canvas=" + encodeURIComponent(canvas);
    socket = new WebSocket(url);
    socket.onopen = () => { attempts = 0; status("live", "● " + t("live")); };
    socket.onmessage = (ev) => { try { handle(JSON.parse(ev.data)); } catch (e) { console.error("live:", e); } };
    socket.onclose = (ev) => {
      if (ev.code === 4403 || ev.code === 4404) { status("off", "○ " + t("not-live")); return; }
      status("reconnecting", "○ " + t("reconnecting"));
      const wait = Math.min(10000, 500 * 2 ** attempts++) + Math.random() * 250;
      setTimeout(connect, wait);
    };
  }
  connect();
}

if (agent && "WebSocket" in window) follow();
