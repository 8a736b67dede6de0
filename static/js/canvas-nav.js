// Finding your way on the canvas: search (id, title, summary, status) that brings hits into
// view, and the keyboard: Tab and the arrow keys move between the drawn nodes, Enter opens one.
// The canvas page (canvas.js) hands itself over with attach(): until then there is nothing to find.
import { matches } from "./canvas-find.js";
import { t } from "./ui-text.js";

const MAX_LISTED = 50;
let hits = [];
let current = -1;
let timer = 0;
let page = null;

const canvas = () => page;
const input = () => document.getElementById("canvas-search");
const svgNode = (id) => document.querySelector(`#diagram .mermaid-host g.node[data-memviz-id="${CSS.escape(id)}"]`);

const search = (query) => matches(canvas() && canvas().scene(), query);

function showHits() {
  const list = document.getElementById("canvas-hits");
  const count = document.querySelector("#diagram .hit-count");
  if (!list || !count) return;
  const q = input().value.trim();
  count.textContent = q ? (hits.length === 1 ? t("hit", { n: 1 }) : t("hits", { n: hits.length })) : "";
  list.innerHTML = "";
  list.hidden = !q || !hits.length || document.activeElement !== input();
  for (const n of hits.slice(0, MAX_LISTED)) {
    const li = document.createElement("li");
    const b = document.createElement("button");
    b.type = "button";
    b.dataset.hit = n.id;
    const title = n.lines[0] || "";
    b.textContent = `${n.id} · ${n.status || t("no-status")} · ${title.length > 60 ? title.slice(0, 59) + "…" : title}`;
    li.appendChild(b);
    list.appendChild(li);
  }
  markHits();
}
function markHits() {
  // the mermaid.js view (canvas-mermaid.js) marks the same hits on its own drawing
  const drawnByMermaid = document.querySelector("#diagram .mermaidjs-host");
  if (drawnByMermaid) {
    drawnByMermaid.querySelectorAll("g.node.hit").forEach((g) => g.classList.remove("hit"));
    for (const n of hits) { const g = drawnByMermaid.querySelector(`g.node[data-memviz-id="${CSS.escape(n.id)}"]`); if (g) g.classList.add("hit"); }
  }
  const host = document.querySelector("#diagram .mermaid-host");
  if (!host) return;
  host.querySelectorAll("g.node.hit, g.node.has-hit").forEach((g) => g.classList.remove("hit", "has-hit"));
  const scene = canvas() && canvas().scene();
  if (!scene || !hits.length) return;
  const groupOf = new Map(scene.groups.map((g) => [g.id, g.parent]));
  for (const n of hits) {
    const g = svgNode(n.id);
    if (g) { g.classList.add("hit"); continue; }
    for (let p = n.group; p; p = groupOf.get(p)) { const s = svgNode(p); if (s) { s.classList.add("has-hit"); break; } }
  }
}
function go(index) {
  if (!hits.length) return;
  current = (index + hits.length) % hits.length;
  const id = hits[current].id;
  canvas().reveal(id, { open: true });
  markHits();
  const count = document.querySelector("#diagram .hit-count");
  if (count) count.textContent = t("hit-of", { i: current + 1, n: hits.length });
}

document.addEventListener("input", (ev) => {
  if (ev.target !== input()) return;
  clearTimeout(timer);
  timer = setTimeout(() => { hits = search(input().value); current = -1; showHits(); }, 80);
});
document.addEventListener("submit", (ev) => {
  if (!ev.target.closest(".canvas-find")) return;
  ev.preventDefault();
  hits = search(input().value);
  go(current + 1);
});
document.addEventListener("keydown", (ev) => {
  if (ev.target === input() && ev.key === "Escape") { input().value = ""; hits = []; showHits(); }
});
document.addEventListener("focusout", (ev) => {
  if (ev.target === input()) setTimeout(() => { const l = document.getElementById("canvas-hits"); if (l && !l.contains(document.activeElement)) l.hidden = true; }, 150);
});
document.addEventListener("click", (ev) => {
  const b = ev.target.closest && ev.target.closest("[data-hit]");
  if (!b) return;
  const i = hits.findIndex((n) => n.id === b.dataset.hit);
  go(i);
  document.getElementById("canvas-hits").hidden = true;
});

// ---- keyboard on the drawing ----------------------------------------------------------------
const DIRS = { ArrowUp: [0, -1], ArrowDown: [0, 1], ArrowLeft: [-1, 0], ArrowRight: [1, 0] };
function nearest(model, fromId, [dx, dy]) {
  const a = model.boxes.get(fromId);
  let best = null, bestScore = Infinity;
  for (const id of model.order) {
    if (id === fromId) continue;
    const b = model.boxes.get(id);
    const along = (b.x - a.x) * dx + (b.y - a.y) * dy;
    if (along <= 1) continue;
    const across = Math.abs((b.x - a.x) * dy) + Math.abs((b.y - a.y) * dx);
    const score = along + 2 * across;
    if (score < bestScore) { bestScore = score; best = id; }
  }
  return best;
}
function keepVisible(id) {
  const view = canvas().view(), model = canvas().model();
  const b = model && model.boxes.get(id);
  if (!view || !b) return;
  const r = view.visibleRect();
  if (b.x - b.w / 2 < r.x || b.x + b.w / 2 > r.x + r.w || b.y - b.h / 2 < r.y || b.y + b.h / 2 > r.y + r.h) view.focusNode(id);
}
document.addEventListener("keydown", (ev) => {
  const g = ev.target.closest && ev.target.closest("#diagram g.node");
  if (!g || ev.ctrlKey || ev.metaKey || ev.altKey) return;
  const id = g.dataset.memvizId;
  if (ev.key === "Enter" || ev.key === " ") {
    ev.preventDefault();
    if (g.dataset.group) canvas().toggleGroup(g.dataset.group);
    else if (ev.key === " ") { const sel = canvas().selection(); canvas().select(sel.includes(id) ? sel.filter((x) => x !== id) : [...sel, id]); }
    else canvas().openNode(id);
    const again = svgNode(id);
    if (again) again.focus({ preventScroll: true });
    return;
  }
  const dir = DIRS[ev.key];
  if (!dir) return;
  ev.preventDefault();
  const next = nearest(canvas().model(), id, dir);
  if (next) { const el = svgNode(next); if (el) el.focus({ preventScroll: true }); }
});
document.addEventListener("focusin", (ev) => {
  const g = ev.target.closest && ev.target.closest("#diagram g.node");
  if (g) keepVisible(g.dataset.memvizId);
});

// the canvas page's API (canvas.js): scene, model, view, reveal, openNode, select, toggleGroup
function attach(canvasPage) { page = canvasPage; }
// a new drawing (memviz's or mermaid.js's): mark the current hits on it
function drawn() { if (hits.length) markHits(); }

export { attach, search, drawn };
