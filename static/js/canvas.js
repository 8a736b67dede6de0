// The canvas page: draws the scene (canvas-draw.js), keeps the map (canvas-view.js), opens the
// node panel, keeps collapsed groups and the open node in the URL, and drives the editing UI:
// node selection, the op forms (htmx), keyboard shortcuts. Revision pages draw before/after.
// Exports `canvas`, the page's API, which it hands to find (canvas-nav.js) and the mermaid.js view.
import * as drawing from "./canvas-draw.js";
import { mermaidView, attach as attachMermaid } from "./canvas-mermaid.js";
import * as nav from "./canvas-nav.js";
import { attach as attachView } from "./canvas-view.js";
import { statuses } from "./statuses.js";
import { t } from "./ui-text.js";

let renderCount = 0;
let view = null;
let model = null;
let scene = null;
let collapsed = new Set();
let savedView = null;
let focusOnRender = null;
let knownGroups = null;
// Selection order matters: merge keeps the first, an edge goes from the first to the second.
let selection = [];

const $ = (sel, root) => (root || document).querySelector(sel);
const diagramEl = () => document.getElementById("diagram");
const hostEl = () => $("#diagram .mermaid-host");

// Only the nodes whose state changes are touched: on 1000 nodes a pass over every node and
// list item took ~45 ms of each click. The ring is drawn by the view on its own layer; the
// node keeps a "selected" class that no style reads (styling it re-rastered the drawing).
let shownSelection = [];
function showSelection({ marks = true } = {}) {
  if (scene) {
    if (!scene.ids) scene.ids = new Set(scene.nodes.map((n) => n.id));
    selection = selection.filter((id) => scene.ids.has(id));
  }
  for (const id of marks ? new Set([...shownSelection, ...selection]) : []) {
    const on = selection.includes(id);
    const key = CSS.escape(id);
    document.querySelectorAll(`#diagram g.node[data-memviz-id="${key}"]`).forEach((g) => g.classList.toggle("selected", on));
    const li = document.querySelector(`.node-list li[data-node="${key}"]`);
    if (li) {
      li.classList.toggle("selected", on);
      const box = li.querySelector("input.node-select");
      if (box) box.checked = on;
    }
  }
  if (marks) { shownSelection = [...selection]; if (view) view.mark(selection); }
  const list = document.getElementById("selection-list");
  if (list) list.textContent = selection.length ? selection.join(", ") : t("none");
  document.body.dataset.selection = selection.join(",");
  // An op is offered only when the selection can feed it (merge and edge take two nodes).
  document.querySelectorAll(".edit-toolbar [data-needs]").forEach((b) => { b.disabled = selection.length < Number(b.dataset.needs); });
}

function toggleSelected(id) {
  if (selection.includes(id)) selection = selection.filter((x) => x !== id);
  else selection.push(id);
  showSelection();
}

// ---- URL state: ?collapsed=a,b (absent: the default overview) and #node=<id> -----------------
function urlCollapsed() {
  const params = new URLSearchParams(location.search);
  if (!params.has("collapsed")) return null;
  return params.get("collapsed").split(",").filter(Boolean);
}
function writeUrl() {
  const params = new URLSearchParams(location.search);
  params.set("collapsed", [...collapsed].join(","));
  const hash = selection.length === 1 ? "#node=" + encodeURIComponent(selection[0]) : location.hash;
  history.replaceState(history.state, "", location.pathname + "?" + params.toString().replace(/%2C/g, ",") + hash);
}
function hashNode() {
  const m = /#node=(.+)$/.exec(location.hash);
  if (!m) return null;
  try {
    return decodeURIComponent(m[1]);
  } catch (_) {
    return m[1]; // a malformed escape (#node=%) names no node; the canvas is still drawn
  }
}

// ---- what opens by default: the overview, with the groups of the current focus expanded ------
function focusNode(sc) {
  const byTime = (list) => list.map((n, i) => [n.ts || "", i, n]).sort((a, b) => (a[0] < b[0] ? -1 : a[0] > b[0] ? 1 : a[1] - b[1])).map((x) => x[2]);
  for (const key of statuses.active) {
    const hits = byTime(sc.nodes.filter((n) => n.key === key));
    if (hits.length) return hits[hits.length - 1];
  }
  const all = byTime(sc.nodes);
  return all[all.length - 1] || null;
}
function groupPath(sc, nodeId) {
  const groups = new Map(sc.groups.map((g) => [g.id, g]));
  const node = sc.nodes.find((n) => n.id === nodeId);
  const path = [];
  for (let g = node ? node.group : groups.has(nodeId) ? groups.get(nodeId).parent : null, guard = 0; g && groups.has(g) && guard < 100; g = groups.get(g).parent, guard++) path.push(g);
  return path;
}
function defaultCollapsed(sc) {
  if (sc.small) return new Set(); // canvas_scene.OVERVIEW_NODES
  const ids = new Set(sc.groups.filter((g) => !g.parent || g.auto).map((g) => g.id));
  const focus = focusNode(sc);
  if (focus) for (const g of groupPath(sc, focus.id)) ids.delete(g);
  return ids;
}

// ---- drawing ---------------------------------------------------------------------------------
function readScene() {
  const el = document.getElementById("canvas-scene");
  return el ? drawing.normalize(JSON.parse(el.textContent)) : null;
}
async function fontsFor(sc) {
  if (!document.fonts || !document.fonts.load) return;
  const chars = new Set();
  for (const n of sc.nodes) for (const l of n.lines) for (const ch of l) chars.add(ch);
  for (const g of sc.groups) for (const ch of g.title || "") chars.add(ch);
  // a redraw (an edit) mostly has its glyphs already: no wait then (load() took 15-100 ms)
  if (document.fonts.check(drawing.FONT, [...chars].join(""))) return;
  // Never wait long: a first visit that must download font slices draws with the fallback
  // metrics and draws again once they arrive (then they are cached for a year).
  const loading = document.fonts.load(drawing.FONT, [...chars].join("")).catch(() => null);
  const late = await Promise.race([loading.then(() => false), new Promise((r) => setTimeout(() => r(true), FONT_WAIT_MS))]);
  if (late) loading.then(() => { drawing.resetMeasures(); if (scene === sc) { savedView = view && view.state(); drawNow(); } });
}
const FONT_WAIT_MS = 400;

async function render() {
  const diagram = diagramEl();
  if (!diagram) return;
  const host = hostEl();
  scene = readScene();
  if (!scene || !host) return;
  document.body.dataset.canvasRendered = "pending";
  const fromUrl = urlCollapsed();
  const known = new Set(scene.groups.map((g) => g.id));
  if (fromUrl) collapsed = new Set(fromUrl.filter((g) => known.has(g)));
  else if (knownGroups) {
    // a re-render (an edit, the agent writing): what the user opened stays open; groups that
    // are new since the last drawing start as the overview would have them
    const fresh = defaultCollapsed(scene);
    collapsed = new Set([...known].filter((g) => (knownGroups.has(g) ? collapsed.has(g) : fresh.has(g))));
  } else collapsed = defaultCollapsed(scene);
  knownGroups = known;
  const deep = renderCount === 0 ? hashNode() : null; // a deep link counts on arrival only
  if (deep && !focusOnRender) focusOnRender = { id: deep, open: !$("#node-panel .node-detail") };
  if (focusOnRender) for (const g of groupPath(scene, focusOnRender.id)) collapsed.delete(g);
  const t0 = performance.now();
  await fontsFor(scene);
  timings.fonts = performance.now() - t0;
  drawNow();
}
const timings = {};

// The drawing's box ends at the window's bottom wherever the page's head leaves its top: a
// fixed 100vh - 160px ran 150 px below the window, and Fit put the drawing's bottom there.
const BOX_MIN_PX = 240, BOX_GAP_PX = 8;
function sizeBox({ fresh = false } = {}) {
  const box = $("#diagram .diagram");
  if (!box || (fresh && box.style.height)) return; // a redraw in the same box: no layout read
  const top = box.getBoundingClientRect().top + window.scrollY;
  box.style.height = Math.max(BOX_MIN_PX, Math.floor(window.innerHeight - top - BOX_GAP_PX)) + "px";
}

function drawNow() {
  const diagram = diagramEl();
  const host = hostEl();
  if (!diagram || !host || !scene) return;
  sizeBox({ fresh: true });
  const keep = view && (savedView || diagram.dataset.keepView === "1") ? (savedView || view.state()) : null;
  if (view) { view.destroy(); view = null; }
  const title = diagram.dataset.title || "canvas";
  const t0 = performance.now();
  const drawn = drawing.draw(scene, { collapsed, title: title + " — " + scene.nodes.length + " nodes", idPrefix: "mc" + (++renderCount) });
  const t1 = performance.now();
  model = drawn.model;
  host.innerHTML = drawn.svg;
  const svg = host.querySelector("svg");
  drawing.applyCss(svg);
  const t2 = performance.now();
  view = attachView(svg, model, $("#diagram .minimap"));
  diagram.dataset.collapsed = [...collapsed].join(",");
  if (focusOnRender && model.boxes.has(focusOnRender.id)) {
    view.focusNode(focusOnRender.id);
    if (focusOnRender.open) openNode(focusOnRender.id, { focus: false });
  } else if (keep) {
    view.restore(keep);
  } else {
    defaultView();
  }
  focusOnRender = null;
  savedView = null;
  showSelection();
  nav.drawn();
  Object.assign(timings, { layout: t1 - t0, insert: t2 - t1, view: performance.now() - t2 });
  document.body.dataset.renderTimings = JSON.stringify(timings, (k, v) => (typeof v === "number" ? Math.round(v) : v));
  document.body.dataset.renderedAt = String(Math.round(performance.now()));
  document.body.dataset.canvasRendered = "ok";
  // When this drawing is on screen: the frame after the one that paints it begins only once
  // that one is rastered (on a 2-core machine without a GPU, 150 ms after its paint for 1000
  // nodes). What a person sees, and what the benchmark times first render and clicks from.
  const drawnCount = renderCount;
  requestAnimationFrame(() => requestAnimationFrame(() => {
    if (renderCount === drawnCount) document.body.dataset.shownAt = String(Math.round(performance.now()));
  }));
  document.body.dataset.renderCount = String(renderCount);
  document.body.dataset.drawnNodes = String(model.leaves.size);
  document.dispatchEvent(new CustomEvent("memviz:drawn")); // canvas-mermaid.js draws the same text
}

// The whole drawing when it fits with readable labels (a small canvas: legible ones); else
// readable labels around the focus (the newest "doing" node and its neighbours).
function defaultView() {
  const px = scene.small ? view.WHOLE_PX : view.READABLE_PX;
  const fitsAll = view.fitScale() * drawing.FONT_SIZE >= px;
  const focus = focusNode(scene);
  if (fitsAll || !focus) { view.fitAll(); return; }
  const id = model.boxes.has(focus.id) ? focus.id : groupPath(scene, focus.id).reverse().find((g) => model.boxes.has(g));
  const doing = [...model.leaves.values()].filter((l) => l.key === focus.key).map((l) => model.boxes.get(l.id));
  const centre = model.boxes.get(id);
  if (!centre) { view.fitAll(); return; }
  // the box around the focus and the other nodes of its status near it
  const near = doing.filter((b) => Math.abs(b.y - centre.y) < 600 && Math.abs(b.x - centre.x) < 900);
  const xs = near.flatMap((b) => [b.x - b.w / 2, b.x + b.w / 2]), ys = near.flatMap((b) => [b.y - b.h / 2, b.y + b.h / 2]);
  const box = near.length ? { x: Math.min(...xs), y: Math.min(...ys), w: Math.max(...xs) - Math.min(...xs), h: Math.max(...ys) - Math.min(...ys) } : { x: centre.x - centre.w / 2, y: centre.y - centre.h / 2, w: centre.w, h: centre.h };
  view.showBox(box, centre);
}

function toggleGroup(groupId) {
  if (collapsed.has(groupId)) collapsed.delete(groupId); else collapsed.add(groupId);
  const before = model && model.boxes.get(groupId);
  writeUrl();
  savedView = null;
  drawNow();
  const after = model.boxes.get(groupId);
  if (before && after) view.showBox({ x: after.x - after.w / 2, y: after.y - after.h / 2, w: after.w, h: after.h }, { x: after.x, y: after.y - after.h / 2 + Math.min(after.h / 2, 300) });
}
function setCollapsed(ids) {
  collapsed = new Set(ids);
  writeUrl();
  savedView = null;
  drawNow();
  view.fitAll();
}

// Bring a node into view from anywhere (list, search, deep link): expand what hides it.
function reveal(id, { open = true } = {}) {
  if (!scene) return false;
  const path = groupPath(scene, id);
  const hidden = path.filter((g) => collapsed.has(g));
  if (hidden.length) { hidden.forEach((g) => collapsed.delete(g)); drawNow(); }
  selection = [id];
  showSelection();
  document.dispatchEvent(new CustomEvent("memviz:reveal", { detail: { id } })); // canvas-mermaid.js
  if (!view || !view.focusNode(id)) return false; // not drawn (yet): the caller opens the panel
  if (open) openNode(id, { focus: false });
  writeUrl();
  const g = hostEl().querySelector(`g.node[data-memviz-id="${CSS.escape(id)}"]`);
  if (g) g.focus({ preventScroll: true });
  return true;
}

// Below the drawing (a phone) the panel a tap opened is out of sight: bring it up.
function panelIntoView() {
  const panel = document.getElementById("node-panel");
  if (panel && panel.getBoundingClientRect().top > window.innerHeight - 60) panel.scrollIntoView({ block: "nearest", behavior: "smooth" });
}

function openNode(id, { focus = false, showPanel = false } = {}) {
  const diagram = diagramEl();
  if (!diagram) return;
  if (focus) { reveal(id, { open: true }); return; }
  const url = diagram.dataset.nodeUrl.replace("__NODE__", encodeURIComponent(id));
  selection = [id];
  // The request goes first; the selection's marks and the URL are shown with the panel, in the
  // same frame: marking a node on a 1000-node drawing cost a frame (25-35 ms) that the panel's
  // answer then waited behind. The toolbar's "Selected:" text is cheap and shows at once.
  const shown = htmx.ajax("GET", url, { source: diagram, target: "#node-panel", swap: "innerHTML" });
  showSelection({ marks: false });
  const show = () => { if (selection.length === 1 && selection[0] === id) { showSelection(); writeUrl(); } };
  Promise.race([shown, new Promise((r) => setTimeout(r, SELECTION_WAIT_MS))]).then(show, show);
  if (showPanel) shown.then(panelIntoView, () => null);
}
const SELECTION_WAIT_MS = 150; // a slow answer does not hold the selection back longer

function bindDiagram() {
  // one delegated listener for every drawing (the SVG is replaced on each render)
  document.addEventListener("click", (ev) => {
    const host = ev.target.closest && ev.target.closest("#diagram .mermaid-host");
    if (!host) return;
    const toggle = ev.target.closest("[data-toggle]");
    if (toggle) { toggleGroup(toggle.dataset.toggle); return; }
    const g = ev.target.closest("g.node");
    if (!g || !g.dataset.memvizId) return;
    if (g.dataset.group) toggleGroup(g.dataset.group);
    else if (ev.shiftKey || ev.ctrlKey || ev.metaKey) toggleSelected(g.dataset.memvizId);
    else openNode(g.dataset.memvizId, { showPanel: true });
  });
}

// ---- revision pages: before/after drawn with added, changed and removed nodes marked ----------
function renderStatic(box, index) {
  const script = box.querySelector("script[id$='-scene']");
  const host = box.querySelector(".mermaid-host");
  if (!script || !host) return;
  drawing.drawStatic(host, JSON.parse(script.textContent), { collapsed: new Set(), title: box.dataset.title || "revision", idPrefix: "rev" + index });
  for (const kind of ["added", "changed", "removed"]) {
    for (const id of (box.dataset[kind] || "").split(",").filter(Boolean)) {
      const g = host.querySelector(`g.node[data-memviz-id="${CSS.escape(id)}"]`);
      if (g) g.classList.add("diff-" + kind);
    }
  }
  box.dataset.rendered = "ok";
}

// the map the zoom buttons and keys move: mermaid.js's when that view is shown (canvas-mermaid.js)
const shownView = () => mermaidView.view() || view;

// ---- editing --------------------------------------------------------------------------
function editor() { return document.getElementById("editor"); }

function openForm(name) {
  const ed = editor();
  if (!ed) return;
  const opener = ed.querySelector(`[data-open="${name}"]`);
  if (opener && opener.disabled) return;  // not enough nodes selected for it
  ed.querySelectorAll(".op-form").forEach((f) => { f.hidden = f.dataset.form !== name; });
  const form = ed.querySelector(`.op-form[data-form="${name}"]`);
  if (!form) return;
  const first = form.querySelector("input:not([type=hidden]):not([type=checkbox]), textarea, select");
  if (first) first.focus();
}

function closeForms() {
  const ed = editor();
  if (ed) ed.querySelectorAll(".op-form").forEach((f) => { f.hidden = true; });
}

function submitHidden(op) {
  const button = document.getElementById(op === "undo" ? "undo-button" : "redo-button");
  if (button && !button.disabled) button.click();
}

document.addEventListener("htmx:configRequest", (ev) => {
  const ed = editor();
  if (!ed || ev.detail.path !== ed.dataset.opsUrl) return;
  const p = ev.detail.parameters;
  const set = (k, v) => { if (typeof p.set === "function") p.set(k, v); else p[k] = v; };
  const has = (k) => (typeof p.has === "function" ? p.has(k) : k in p);
  if (!has("base")) set("base", ed.dataset.hash);
  if (!has("nodes")) set("nodes", selection.join(","));
  if (!has("node") && selection.length) set("node", selection[0]);
  if (!has("source") && selection.length > 0) set("source", selection[0]);
  if (!has("target") && selection.length > 1) set("target", selection[1]);
  const diagram = diagramEl();
  if (diagram && !has("collapsed")) set("collapsed", diagram.dataset.collapsed || "");
});

document.addEventListener("htmx:beforeSwap", (ev) => {
  const target = ev.detail.target;
  if (target && (target.id === "editor" || target.id === "diagram")) document.body.dataset.canvasRendered = "pending";
  // Keep the pan/zoom of the diagram across an edit's re-render.
  if (view && target && target.id === "editor") savedView = view.state();
});

document.addEventListener("click", (ev) => {
  const opener = ev.target.closest("[data-open]");
  if (opener) { openForm(opener.dataset.open); return; }
  if (ev.target.closest("[data-close]")) { closeForms(); return; }
  if (ev.target.closest("[data-help]")) { const d = document.getElementById("shortcut-help"); if (d) d.showModal(); return; }
  const box = ev.target.closest("input.node-select");
  if (box) { toggleSelected(box.value); return; }
  const groups = ev.target.closest("[data-groups]");
  if (groups && scene) {
    ev.preventDefault();
    setCollapsed(groups.dataset.groups === "overview" ? scene.groups.filter((g) => !g.parent || g.auto).map((g) => g.id) : []);
    return;
  }
  const button = ev.target.closest("[data-zoom]");
  const shown = shownView();
  if (!button || !shown) return;
  const action = button.dataset.zoom;
  if (action === "in") shown.zoomIn(); else if (action === "out") shown.zoomOut(); else shown.fitAll();
});
document.addEventListener("click", (ev) => {
  // the node list: shift-click selects; a click also shows the node on the canvas
  const link = ev.target.closest(".node-list a.node-link");
  if (!link) return;
  const id = link.closest("li").dataset.node;
  if (ev.shiftKey || ev.ctrlKey || ev.metaKey) {
    ev.preventDefault();
    ev.stopPropagation();
    toggleSelected(id);
    return;
  }
  if (!diagramEl()) return; // no canvas on this page: the link opens the node's page
  ev.preventDefault();
  openNode(id); // first: the panel opens even when the drawing cannot show the node
  reveal(id, { open: false });
}, true);

// key → form, from the toolbar's buttons (their keys come from the op registry, canvases/edit_ops.py)
function shortcuts() {
  return Object.fromEntries([...document.querySelectorAll(".edit-toolbar [data-key]")].map((b) => [b.dataset.key, b.dataset.open]));
}
document.addEventListener("keydown", (ev) => {
  const typing = ev.target.closest("textarea, select, input:not([type=checkbox]):not([type=radio]):not([type=submit]):not([type=button])");
  if (typing) {
    if (ev.key === "Escape") { closeForms(); ev.target.blur(); }
    return;
  }
  if (ev.ctrlKey || ev.metaKey || ev.altKey) return;
  if (document.querySelector("dialog[open]")) return;  // Escape closes the help, nothing else
  const editing = !!document.querySelector(".edit-toolbar");
  const form = editing && shortcuts()[ev.key];
  if (form) { ev.preventDefault(); openForm(form); return; }
  if (editing && ev.key === "z") { submitHidden("undo"); return; }
  if (editing && ev.key === "Z") { submitHidden("redo"); return; }
  if (ev.key === "Escape") { selection = []; showSelection(); closeForms(); return; }
  if (ev.key === "?") { const d = document.getElementById("shortcut-help"); if (d) d.showModal(); return; }
  if (ev.key === "/" && document.getElementById("canvas-search")) { ev.preventDefault(); document.getElementById("canvas-search").focus(); return; }
  const shown = shownView();
  if (!shown) return;
  if (ev.key === "+" || ev.key === "=") shown.zoomIn();
  else if (ev.key === "-") shown.zoomOut();
  else if (ev.key === "0") shown.fitAll();
});

window.addEventListener("hashchange", () => { const id = hashNode(); if (id && scene) reveal(id); });
window.addEventListener("resize", () => { sizeBox(); if (view) view.resize(); });

function staleCheck() {
  const live = document.getElementById("live");
  const ed = editor();
  if (!live || !ed) return;
  const note = live.querySelector(".stale-note");
  if (note) note.hidden = live.dataset.hash === ed.dataset.hash;
}

// Draw as soon as a new diagram is in (afterSwap), not after htmx settles: an edit's answer
// shows ~one settle earlier. onLoad stays for content htmx loads in other ways.
let drawnScene = null; // the <script id="canvas-scene"> drawn last
function renderIfNew() {
  const diagram = diagramEl();
  if (!diagram) return;
  const sceneEl = document.getElementById("canvas-scene");
  if (!diagram.dataset.drawn) {
    diagram.dataset.drawn = "1";
    drawnScene = sceneEl;
    render();
  } else if (sceneEl && sceneEl !== drawnScene) {
    // an edit's answer swaps the scene alone (edit_views._changed_regions): same view, new drawing
    drawnScene = sceneEl;
    if (view && !savedView) savedView = view.state();
    render().then(refreshOpenPanel);
  }
}
// the open node's panel shows what the edit changed (its note, status, title, rows)
function refreshOpenPanel() {
  const open = document.querySelector("#node-panel .node-detail");
  const diagram = diagramEl();
  if (!open || !diagram || !scene || !scene.nodes.some((n) => n.id === open.dataset.node)) return;
  const url = diagram.dataset.nodeUrl.replace("__NODE__", encodeURIComponent(open.dataset.node));
  htmx.ajax("GET", url, { source: document.getElementById("node-panel"), target: "#node-panel", swap: "innerHTML" });
}
document.addEventListener("memviz:canvas-edited", (ev) => {
  // the base of the next edit: set before any region is swapped
  const ed = editor();
  if (!ed || !ev.detail || !ev.detail.hash) return;
  ed.dataset.hash = ev.detail.hash;
  // the forms stay (only changed regions are swapped): empty and close them as a redraw did
  ed.querySelectorAll(".op-form").forEach((f) => f.reset());
  closeForms();
});
// live.js swapped the editor for the agent's new text: the selection's marks on the new drawing
document.addEventListener("memviz:editor-refreshed", () => showSelection());
document.addEventListener("htmx:afterSwap", renderIfNew);
document.addEventListener("htmx:oobAfterSwap", renderIfNew);
htmx.onLoad((elt) => {
  if (elt.id === "diagram" || elt.id === "editor") renderIfNew();
  if (elt.id === "editor") showSelection({ marks: false });  // the new toolbar's op buttons
  if (elt.id === "editor") { const live = document.getElementById("live"); if (live) live.dataset.hash = elt.dataset.hash; }
  if (elt.id === "live" || elt.id === "editor") staleCheck();
});
export const canvas = {
  render, reveal, openNode, toggleGroup, setCollapsed,
  selection: () => [...selection],
  select: (ids) => { selection = [...ids]; showSelection(); },
  scene: () => scene, model: () => model, view: () => view, collapsed: () => [...collapsed],
};
function start() {
  nav.attach(canvas);
  attachMermaid(canvas);
  bindDiagram();
  renderIfNew();
  document.querySelectorAll(".static-diagram").forEach(renderStatic);
}
if (document.readyState === "loading") document.addEventListener("DOMContentLoaded", start); else start();
