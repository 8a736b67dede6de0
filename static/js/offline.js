// The offline file (debugging/offline_html.py): a slider over frames (a session's rows or a
// canvas's revisions), the canvas of each frame drawn by memviz's renderer (canvas-draw.js,
// labels as text), and node panels with their rows and the refs they cite. No network: every
// byte is in this file, and its Content-Security-Policy forbids any fetch.
import { clickableNodes, drawFrame, el, nodeRows } from "./replay-frame.js";

const data = JSON.parse(document.getElementById("offline-data").textContent);
const strings = {};
document.getElementById("offline-strings").content.querySelectorAll("[data-k]").forEach((e) => { strings[e.dataset.k] = e.textContent; });
const total = data.frames.scene.length;
const slider = document.getElementById("offline-slider");
const host = document.querySelector("#offline-diagram .mermaid-host");
const errorBox = document.querySelector("#offline-diagram .render-error");
const box = document.getElementById("offline-node");
let index = total - 1;
let drawn = null;
let nodeEls = new Map();


function draw(sceneIndex) {
  if (sceneIndex === drawn) return;
  drawn = sceneIndex;
  nodeEls = new Map();
  errorBox.hidden = true;
  if (sceneIndex === null) { host.replaceChildren(el("p", "muted", strings.none)); return; }
  const scene = data.scenes[sceneIndex];
  if (!drawFrame(host, errorBox, scene.scene, { title: scene.file, idPrefix: "offline" + sceneIndex })) return;
  nodeEls = clickableNodes(host, new Set(scene.nodes.map((n) => n.id)));
}

function rowItem(r, current) {
  const li = el("li", "row" + (current ? " current" : ""));
  li.value = r[1];
  const head = el("div", "row-head");
  head.append(el("code", "tool-call", r[4] || "(no tool_call)"), " ", el("span", "node-ref", r[3] === null ? "null" : r[3]), " ", el("time", "muted small", r[2] || strings.unknown));
  li.append(head, el("p", "summary", r[5]));
  if (r[6]) {
    const details = el("details", "offline-ref");
    details.append(el("summary", null, strings.ref + " " + r[6]));
    details.addEventListener("toggle", () => {
      if (!details.open || details.dataset.filled) return;
      details.dataset.filled = "1";
      const body = el("div", "ref-body");
      const html = data.refs[r[6]];
      // memviz's sanitized rendering of the ref (no script, no link, no image)
      if (typeof html === "string") body.innerHTML = html; else body.textContent = strings.ref_missing;
      details.append(body);
    });
    li.append(details);
  }
  return li;
}

function rowsUpTo() { return data.rows_by_frame ? index : data.rows.length - 1; }

function showRows() {
  const list = document.getElementById("offline-rows");
  const items = [];
  const last = rowsUpTo();
  for (let k = last; k >= 0 && k > last - 15; k--) items.push(rowItem(data.rows[k], data.rows_by_frame && k === index));
  list.replaceChildren(...items);
}

function showNode(id) {
  const sceneIndex = data.frames.scene[index];
  const scene = sceneIndex === null ? null : data.scenes[sceneIndex];
  const node = scene && scene.nodes.find((n) => n.id === id);
  if (!node) { box.hidden = true; return; }
  const list = el("ol", "rows compact");
  const rows = nodeRows(data.rows, id, rowsUpTo());
  rows.forEach((r) => list.append(rowItem(r, false)));
  const count = rows.length;
  const close = el("button", "link", strings.close);
  close.type = "button";
  close.addEventListener("click", () => { box.hidden = true; delete box.dataset.node; });
  box.replaceChildren(el("h3", null, id + " · " + node.title), el("p", "small", (node.status || "—") + " · " + (node.summary || "")),
    el("p", "muted small", strings.rows + ": " + count), list, close);
  box.hidden = false;
  box.dataset.node = id;
}

function show(i) {
  index = Math.max(0, Math.min(total - 1, i));
  slider.value = String(index);
  const sceneIndex = data.frames.scene[index];
  const frameWord = data.kind === "session" ? strings.session_frame + " " + data.rows[index][1] : strings.canvas_frame;
  document.getElementById("offline-frame").textContent = frameWord + " · " + (data.frames.label[index] || strings.unknown);
  draw(sceneIndex);
  const scene = sceneIndex === null ? null : data.scenes[sceneIndex];
  const present = new Set(scene ? scene.nodes.filter((n) => n.from <= index || !data.rows_by_frame).map((n) => n.id) : []);
  nodeEls.forEach((g, id) => g.classList.toggle("replay-absent", !present.has(id)));
  showRows();
  if (!box.hidden && box.dataset.node) showNode(box.dataset.node);
  document.body.dataset.frame = String(index);
  document.body.dataset.present = [...present].join(",");
  document.body.dataset.ready = "1";
}

document.getElementById("offline-about").textContent = strings.offline + " " + strings.generated + " " + data.generated + ".";
document.getElementById("offline-hint").textContent = strings.click;
document.getElementById("offline-rows-title").textContent = data.rows_by_frame ? strings.rows_so_far : strings.rows;
if (data.notes.length) document.getElementById("offline-notes").prepend(el("li", "muted", strings.notes + ":"));
slider.max = String(Math.max(0, total - 1));
slider.addEventListener("input", () => show(Number(slider.value)));
document.querySelectorAll("[data-step]").forEach((b) => b.addEventListener("click", () => show(index + Number(b.dataset.step))));
host.parentElement.addEventListener("click", (ev) => {
  const g = ev.target.closest("g.node");
  if (g && g.dataset.memvizId) showNode(g.dataset.memvizId);
});
if (total) show(index); else host.replaceChildren(el("p", "muted", strings.none));
