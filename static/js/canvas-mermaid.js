// The mermaid.js view: "Drawn by: memviz | mermaid.js". memviz's renderer (canvas-draw.js) stays
// the default; this draws the agent's text with mermaid.js itself, loaded only when asked (the
// 3.5 MB bundle is injected on the first switch, never on page load). The preference is kept in
// localStorage. The text is the file's own (canvases/mermaid/mermaid_source.py), memviz's status
// colours added only when the user ticks them. Clicks, selection, find and #node= go through
// the canvas page (canvas.js, which hands itself over with attach()) as on memviz's drawing:
// mermaid's node elements (id "…flowchart-<id>-<n>") get the node id as data-memviz-id, which is
// all canvas.js and canvas-nav.js look for. The replay page uses it without a canvas page.
import { drawn as navDrawn } from "./canvas-nav.js";
import { t } from "./ui-text.js";

const PREF = "memviz.renderer";
const STATUS_PREF = "memviz.mermaidStatus";
// mermaid.render() measured in Debian's chromium on this 2-core machine (sample canvases,
// docs/canvas-rendering.md): [nodes, ms]. Between and beyond, linear; above the fast
// renderer's budget the control says how long mermaid.js will take, and still offers it.
const MEASURED = [[0, 600], [40, 1100], [100, 2300], [300, 5300], [1000, 54000]];
const BUDGET_MS = 1500; // bench/bench_render.py TARGETS["first"]
const NODE_ID = /^(.+)-\d+$/;
let loading = null;
let page = null; // the canvas page's API, on the canvas, revision and compare pages
let drawCount = 0;
let mainView = null; // the canvas page's pan/zoom on mermaid's drawing
let drawnText = null;
const sheets = new Map(); // host element -> the CSSStyleSheet of its drawing
const styles = new WeakMap(); // mermaid's <svg> -> its CSS text

const pref = () => { try { return localStorage.getItem(PREF) === "mermaid"; } catch (e) { return false; } };
const statusPref = () => { try { return localStorage.getItem(STATUS_PREF) === "1"; } catch (e) { return false; } };
const save = (key, value) => { try { localStorage.setItem(key, value); } catch (e) { /* private mode */ } };
const active = () => document.body.dataset.renderer === "mermaid";

function load() {
  if (window.mermaid) return Promise.resolve(window.mermaid);
  if (!loading) {
    loading = new Promise((resolve, reject) => {
      const holder = document.querySelector("[data-mermaid-src]");
      if (!holder) { reject(new Error("no mermaid.js on this page")); return; }
      const s = document.createElement("script");
      s.src = holder.dataset.mermaidSrc;
      s.onload = () => {
        // "strict": labels through DOMPurify, no click callbacks; the limits are raised for
        // big canvases (mermaid refuses text over 50,000 characters or 500 edges by default)
        window.mermaid.initialize({ startOnLoad: false, securityLevel: "strict", maxTextSize: 5e6, maxEdges: 1e5 });
        resolve(window.mermaid);
      };
      s.onerror = () => { loading = null; reject(new Error("mermaid.js could not be loaded")); };
      document.head.appendChild(s);
    });
  }
  return loading;
}

// The estimated time mermaid.js takes for n nodes, in ms.
function estimate(n) {
  let i = 1;
  while (i < MEASURED.length - 1 && n > MEASURED[i][0]) i++;
  const [[n0, t0], [n1, t1]] = [MEASURED[i - 1], MEASURED[i]];
  return t0 + ((t1 - t0) * (n - n0)) / (n1 - n0);
}

// mermaid's drawing in `host`; its <style> (an inline style element the page's CSP refuses) is
// given to the document as a constructed stylesheet instead, scoped to the drawing's id as
// mermaid writes it.
async function drawInto(host, text, known) {
  const m = await load();
  const id = "mermaid-view-" + (++drawCount);
  let svg;
  try {
    ({ svg } = await m.render(id, text));
  } finally {
    // on a parse error mermaid leaves its "syntax error" drawing at the end of the page
    const left = document.getElementById("d" + id);
    if (left) left.remove();
  }
  host.innerHTML = svg;
  const el = host.querySelector("svg");
  let css = "";
  el.querySelectorAll("style").forEach((s) => { css += s.textContent; s.remove(); });
  const sheet = new CSSStyleSheet();
  sheet.replaceSync(css);
  // this host's previous drawing's sheet goes, and those of hosts an htmx swap took away
  const gone = new Set([sheets.get(host)]);
  for (const [h, old] of sheets) if (!h.isConnected) { gone.add(old); sheets.delete(h); }
  document.adoptedStyleSheets = [...document.adoptedStyleSheets.filter((s) => !gone.has(s)), sheet];
  sheets.set(host, sheet);
  styles.set(el, css); // an export carries it
  // mermaid 11 names a node's element "<svg id>-flowchart-<node id>-<counter>"
  const prefix = id + "-flowchart-";
  for (const g of el.querySelectorAll("g.node")) {
    const match = g.id.startsWith(prefix) && NODE_ID.exec(g.id.slice(prefix.length));
    if (!match || !known.has(match[1])) continue;
    g.dataset.memvizId = match[1];
    g.setAttribute("tabindex", "0");
    g.setAttribute("role", "button");
  }
  return el;
}

// ---- the canvas page ----------------------------------------------------------------------
const diagram = () => document.getElementById("diagram");
// The canvas page does not carry the text (a 1000-node canvas's is ~200 kB no memviz view
// reads): it is fetched when this view is shown, and again when a new scene comes in.
let source = null, sourceFor = null;
async function pageText() {
  const sceneEl = document.getElementById("canvas-scene");
  if (!sceneEl || !diagram()) return null;
  if (sourceFor !== sceneEl) {
    const response = await fetch(diagram().dataset.mermaidUrl, { headers: { Accept: "application/json" }, credentials: "same-origin" });
    if (!response.ok) throw new Error(`the canvas text could not be loaded (${response.status})`);
    source = await response.json();
    sourceFor = sceneEl;
  }
  return textOf(source);
}
function mainHost() {
  const wrap = document.querySelector("#diagram .diagram");
  if (!wrap) return null;
  let host = wrap.querySelector(".mermaidjs-host");
  if (!host) {
    host = document.createElement("div");
    host.className = "mermaidjs-host";
    host.setAttribute("aria-live", "polite");
    wrap.appendChild(host);
  }
  return host;
}

function attachView(svg) {
  svg.removeAttribute("style");
  svg.setAttribute("width", "100%");
  svg.setAttribute("height", "100%");
  const pz = svgPanZoom(svg, { zoomEnabled: true, controlIconsEnabled: false, fit: true, center: true, minZoom: 0.02, maxZoom: 20, dblClickZoomEnabled: false, zoomScaleSensitivity: 0.25 });
  const viewport = svg.querySelector(".svg-pan-zoom_viewport");
  function fitAll() { pz.resize(); pz.fit(); pz.center(); }
  // svg-pan-zoom paints on the next frame: positions come from the drawing, not the screen
  function focusNode(id) {
    const g = svg.querySelector(`g.node[data-memviz-id="${CSS.escape(id)}"]`);
    if (!g) return false;
    const b = g.getBBox(), m = viewport.getCTM().inverse().multiply(g.getCTM());
    const x = b.x + b.width / 2, y = b.y + b.height / 2;
    const cx = m.a * x + m.c * y + m.e, cy = m.b * x + m.d * y + m.f;
    const real = pz.getSizes().realZoom;
    const k = Math.max(real, 1); // labels at mermaid's own size at least
    if (k !== real) pz.zoom((k * pz.getZoom()) / real);
    const sizes = pz.getSizes();
    pz.pan({ x: sizes.width / 2 - cx * k, y: sizes.height / 2 - cy * k });
    return true;
  }
  function visibleRect() {
    const k = pz.getSizes().realZoom, p = pz.getPan(), r = svg.getBoundingClientRect();
    return { x: -p.x / k, y: -p.y / k, w: r.width / k, h: r.height / k };
  }
  return {
    panZoom: pz, viewport, fitAll, focusNode, visibleRect,
    zoomIn: () => pz.zoomIn(), zoomOut: () => pz.zoomOut(),
    scale: () => pz.getSizes().realZoom,
    state: () => ({ zoom: pz.getZoom(), pan: pz.getPan() }),
    restore: (s) => { pz.zoom(s.zoom); pz.pan(s.pan); },
    destroy: () => { try { pz.destroy(); } catch (e) { /* gone */ } },
  };
}

function failed(host, err) {
  host.innerHTML = "";
  const p = document.createElement("p");
  p.className = "render-error";
  p.textContent = t("mermaid-failed") + " " + String((err && err.message) || err);
  host.appendChild(p);
  document.body.dataset.mermaidRendered = "error";
}

// A remembered preference does not start a drawing that would hold the tab for longer than the
// fast renderer's budget (mermaid.js blocks the page while it draws: ~54 s on 1000 nodes); the
// view asks first. A click on "mermaid.js" on this page is the answer already.
let asked = false;
function ask(host, ms) {
  host.innerHTML = "";
  const p = document.createElement("p");
  p.className = "mermaid-ask";
  const go = document.createElement("button");
  go.type = "button";
  go.dataset.mermaidGo = "1";
  go.textContent = t("mermaid-draw", { s: Math.round(ms / 1000) });
  p.append(go);
  host.appendChild(p);
  document.body.dataset.mermaidRendered = "asking";
}

async function drawMain() {
  const host = mainHost();
  const canvas = page;
  if (!host || !canvas || !canvas.scene()) return;
  const ms = estimate(canvas.scene().nodes.length);
  if (!asked && ms > BUDGET_MS) { ask(host, ms); return; }
  let text;
  try { text = await pageText(); } catch (err) { failed(host, err); return; }
  if (text === null) return;
  if (text === drawnText && host.querySelector("svg")) return;
  const keep = mainView && drawnText !== null ? mainView.state() : null;
  drawnText = text;
  document.body.dataset.mermaidRendered = "pending";
  const scene = canvas.scene();
  const known = new Set([...scene.nodes.map((n) => n.id)]);
  const t0 = performance.now();
  let svg;
  try {
    svg = await drawInto(host, text, known);
  } catch (err) {
    drawnText = null;
    failed(host, err);
    return;
  }
  if (text !== drawnText) return; // a newer text is being drawn
  if (mainView) mainView.destroy();
  mainView = attachView(svg);
  if (keep) mainView.restore(keep);
  canvas.select(canvas.selection()); // marks the selection on the new drawing
  navDrawn(); // and the find hits
  const deep = !keep && canvas.selection().length === 1 ? canvas.selection()[0] : null;
  if (deep) mainView.focusNode(deep);
  document.body.dataset.mermaidMs = String(Math.round(performance.now() - t0));
  document.body.dataset.mermaidRendered = "ok";
}

// ---- revision and compare pages: each before/after box drawn by mermaid.js ---------------
async function drawStatic() {
  for (const box of document.querySelectorAll(".static-diagram")) {
    const source = box.querySelector("script[id$='-mermaid']");
    const sceneEl = box.querySelector("script[id$='-scene']");
    if (!source || !sceneEl) continue;
    const text = textOf(JSON.parse(source.textContent));
    if (box.dataset.mermaidText === text) continue;
    const host = hostIn(box);
    const known = new Set(JSON.parse(sceneEl.textContent).nodes.map((n) => n.id));
    try {
      await drawInto(host, text, known);
    } catch (err) {
      host.textContent = t("mermaid-failed") + " " + String((err && err.message) || err);
      continue;
    }
    box.dataset.mermaidText = text;
    for (const kind of ["added", "changed", "removed"]) {
      for (const id of (box.dataset[kind] || "").split(",").filter(Boolean)) {
        const g = host.querySelector(`g.node[data-memviz-id="${CSS.escape(id)}"]`);
        if (g) g.classList.add("diff-" + kind);
      }
    }
  }
  document.body.dataset.mermaidRendered = "ok";
}

// ---- the control --------------------------------------------------------------------------
function showControl() {
  const on = active();
  document.querySelectorAll(".renderer-switch [data-renderer]").forEach((b) => b.setAttribute("aria-pressed", String((b.dataset.renderer === "mermaid") === on)));
  document.querySelectorAll(".renderer-switch input[data-mermaid-status]").forEach((box) => { box.checked = statusPref(); box.disabled = !on; });
  const ms = estimate(nodeCount());
  document.querySelectorAll(".renderer-switch .renderer-cost").forEach((el) => {
    el.textContent = ms > BUDGET_MS ? t("mermaid-cost", { s: Math.round(ms / 1000) }) : "";
  });
}

// the largest canvas this page draws: the canvas page's scene, the revision/compare boxes, the replay's scenes
function nodeCount() {
  const scene = page && page.scene();
  if (scene) return scene.nodes.length;
  const sizes = [...document.querySelectorAll(".static-diagram script[id$='-scene']")].map((s) => JSON.parse(s.textContent).nodes.length);
  const replay = document.getElementById("replay-data");
  if (replay) sizes.push(...JSON.parse(replay.textContent).scenes.map((s) => s.nodes.length));
  return Math.max(0, ...sizes);
}

async function apply() {
  const was = document.body.dataset.renderer;
  document.body.dataset.renderer = pref() ? "mermaid" : "memviz";
  showControl();
  // other pages that draw (the replay) follow the switch
  if (was) document.dispatchEvent(new CustomEvent("memviz:renderer"));
  if (!active()) return;
  if (diagram()) await drawMain();
  else if (document.querySelector(".static-diagram")) await drawStatic();
}

document.addEventListener("click", (ev) => {
  const b = ev.target.closest && ev.target.closest(".renderer-switch [data-renderer]");
  if (b) { save(PREF, b.dataset.renderer); asked = true; apply(); return; }
  if (ev.target.closest && ev.target.closest("[data-mermaid-go]")) { asked = true; drawMain(); return; }
  // a node of mermaid's drawing: the same panel and selection as on memviz's (Enter, Space and
  // the arrow keys on it: canvas-nav.js, which looks for g.node[data-memviz-id] as well)
  const g = ev.target.closest && ev.target.closest("#diagram .mermaidjs-host g.node[data-memviz-id]");
  if (!g || !page) return;
  const id = g.dataset.memvizId, canvas = page;
  if (ev.shiftKey || ev.ctrlKey || ev.metaKey) {
    const sel = canvas.selection();
    canvas.select(sel.includes(id) ? sel.filter((x) => x !== id) : [...sel, id]);
  } else canvas.openNode(id);
});
document.addEventListener("change", (ev) => {
  if (!ev.target.matches || !ev.target.matches("input[data-mermaid-status]")) return;
  save(STATUS_PREF, ev.target.checked ? "1" : "0");
  apply();
});
// canvas.js says when it brought a node into view (find, the node list, #node=)
document.addEventListener("memviz:reveal", (ev) => { if (active() && mainView) mainView.focusNode(ev.detail.id); });
// a new text (an edit, the agent writing) comes with a new scene: draw it again
document.addEventListener("memviz:drawn", () => { showControl(); if (active() && diagram()) drawMain(); });
window.addEventListener("resize", () => { if (mainView) mainView.panZoom.resize(); });

// Export (canvas-export.js): mermaid's drawing as a standalone SVG, its CSS inside.
function buildSvg(whole, pad) {
  const live = document.querySelector("#diagram .mermaidjs-host svg");
  const port = live && live.querySelector(".svg-pan-zoom_viewport");
  if (!live || !port || !mainView) throw new Error("nothing drawn yet");
  const b = port.getBBox();
  const r = whole ? { x: b.x - pad, y: b.y - pad, w: b.width + 2 * pad, h: b.height + 2 * pad } : mainView.visibleRect();
  const scale = whole ? 1 : mainView.scale();
  const svg = live.cloneNode(true);
  const content = svg.querySelector(".svg-pan-zoom_viewport");
  content.removeAttribute("transform");
  content.removeAttribute("style");
  svg.removeAttribute("style");
  svg.querySelectorAll("[data-memviz-id]").forEach((g) => { g.classList.remove("selected", "hit"); g.removeAttribute("tabindex"); g.removeAttribute("role"); });
  svg.setAttribute("viewBox", `${r.x} ${r.y} ${r.w} ${r.h}`);
  svg.setAttribute("width", Math.round(r.w * scale));
  svg.setAttribute("height", Math.round(r.h * scale));
  const ns = "http://www.w3.org/2000/svg";
  const bg = document.createElementNS(ns, "rect");
  Object.entries({ x: r.x, y: r.y, width: r.w, height: r.h, fill: "#ffffff" }).forEach(([k, v]) => bg.setAttribute(k, v));
  content.insertBefore(bg, content.firstChild);
  const style = document.createElementNS(ns, "style");
  style.textContent = styles.get(live) || "";
  svg.insertBefore(style, svg.firstChild);
  return { text: new XMLSerializer().serializeToString(svg), width: r.w * scale, height: r.h * scale };
}

function hostIn(parent) {
  let host = parent.querySelector(":scope > .mermaidjs-host");
  if (!host) { host = document.createElement("div"); host.className = "mermaidjs-host static"; parent.appendChild(host); }
  return host;
}
const textOf = (data) => (statusPref() && data.status ? data.text + "\n" + data.status + "\n" : data.text);

export const mermaidView = {
  active, load, estimate, apply, buildSvg, hostIn, textOf,
  drawText: (host, text, known) => drawInto(host, text, known).then((svg) => { document.body.dataset.mermaidRendered = "ok"; return svg; }),
  text: async () => (await pageText()) || "",
  view: () => (active() ? mainView : null),
  svg: () => (active() ? document.querySelector("#diagram .mermaidjs-host svg") : null),
};
export function attach(canvasPage) { page = canvasPage; }
// Modules run before DOMContentLoaded, after the page's other modules: canvas.js has attached by then.
document.addEventListener("DOMContentLoaded", apply);
