// Replay of a session: a slider over its rows; the canvas as it stood at each row, drawn by
// memviz's canvas renderer (canvas-draw.js, labels as text), nodes that do not exist yet faded.
// Stepping re-draws only when the canvas text changes.
import { mermaidView } from "./canvas-mermaid.js";
import { clickableNodes, drawFrame, el, nodeRows, showError } from "./replay-frame.js";

const data = JSON.parse(document.getElementById("replay-data").textContent);
const strings = {};
document.getElementById("replay-strings").content.querySelectorAll("[data-k]").forEach((el) => { strings[el.dataset.k] = el.textContent; });
const total = data.rows.length;
const slider = document.getElementById("replay-slider");
const host = document.querySelector("#replay-diagram .mermaid-host");
const errorBox = document.querySelector("#replay-diagram .render-error");
const playButton = document.querySelector("[data-play]");
let index = data.index;
let renderedScene = null;
let renderCount = 0;
let nodeEls = new Map();
let timer = null;
let pending = Promise.resolve();


async function renderScene(sceneIndex) {
  if (sceneIndex === renderedScene) return;
  renderedScene = sceneIndex;
  nodeEls = new Map();
  errorBox.hidden = true;
  if (sceneIndex === null) { host.replaceChildren(el("p", "muted", strings.none)); return; }
  const scene = data.scenes[sceneIndex];
  // memviz's own renderer, as on the canvas and revision pages
  if (!drawFrame(host, errorBox, scene.scene, { title: data.file || "replay", idPrefix: "replay" + (++renderCount) })) return;
  const known = new Set(scene.nodes.map((n) => n.id));
  // the mermaid.js view when the user chose it (canvas-mermaid.js): the same nodes, mapped back
  const viaMermaid = mermaidView.active() && scene.mermaid;
  if (viaMermaid) {
    try {
      await mermaidView.drawText(mermaidView.hostIn(host.parentElement), mermaidView.textOf(scene.mermaid), known);
    } catch (err) {
      showError(errorBox, err);
    }
  }
  nodeEls = clickableNodes(viaMermaid ? host.parentElement.querySelector(".mermaidjs-host") : host, known);
}

function present(sceneIndex, i) {
  if (sceneIndex === null) return [];
  return data.scenes[sceneIndex].nodes.filter((n) => n.from <= i).map((n) => n.id);
}

function sourceLabel(scene) {
  if (!scene) return "—";
  if (scene.source === "revision") return strings.revision + " r" + scene.revision + (scene.author ? " (" + scene.author + ")" : "");
  return strings[scene.source] || scene.source;
}

function rowItem(r, current) {
  const li = el("li", "row" + (current ? " current" : ""));
  li.value = r[1];
  const head = el("div", "row-head");
  head.append(el("code", "tool-call", r[4] || "(no tool_call)"), " ", el("span", "node-ref", r[3] === null ? "null" : r[3]), " ",
    el("time", "muted small", r[2] || strings.unknown));
  li.append(head, el("p", "summary", r[5]));
  return li;
}

function showRows(i) {
  const list = document.getElementById("replay-rows");
  const items = [];
  for (let k = i; k >= 0 && k > i - 15; k--) items.push(rowItem(data.rows[k], k === i));
  list.replaceChildren(...items);
}

function showNode(id) {
  const box = document.getElementById("replay-node");
  const sceneIndex = data.frames.scene[index];
  const scene = sceneIndex === null ? null : data.scenes[sceneIndex];
  const node = scene && scene.nodes.find((n) => n.id === id);
  if (!node) { box.hidden = true; return; }
  const rows = nodeRows(data.rows, id, index);
  const link = el("a", null, strings.open);
  link.href = data.canvas_url.replace("__FILE__", encodeURIComponent(scene.file)) + "#node=" + encodeURIComponent(id);
  const list = el("ol", "rows compact");
  rows.forEach((r) => list.append(rowItem(r, false)));
  box.replaceChildren(el("h3", null, id + " · " + node.title), el("p", "small", (node.status || "—") + " · " + (node.summary || "")),
    el("p", "muted small", rows.length + " " + strings.rows), list, link);
  box.hidden = false;
  box.dataset.node = id;
}

async function show(i) {
  index = Math.max(0, Math.min(total - 1, i));
  const sceneIndex = data.frames.scene[index];
  const scene = sceneIndex === null ? null : data.scenes[sceneIndex];
  slider.value = String(index);
  document.getElementById("replay-index").textContent = data.rows[index][1];
  const time = data.frames.t[index];
  const timeEl = document.getElementById("replay-time");
  timeEl.dateTime = time || "";
  timeEl.textContent = time || strings.unknown;  // the agent's stamp, as on every page
  const when = new Date(time);  // the viewer's zone on hover, as locale.js does on every page
  timeEl.title = time && !isNaN(when) ? when.toLocaleString(document.documentElement.lang || undefined, { timeZoneName: "short" }) : "";
  document.getElementById("replay-at").value = time || "";
  const branchRow = document.getElementById("replay-branch-row");  // "branch from this instant"
  if (branchRow) branchRow.value = String(data.rows[index][1]);
  document.getElementById("replay-canvas").textContent = data.frames.active[index] || "—";
  const source = document.getElementById("replay-source");
  source.textContent = sourceLabel(scene);
  source.className = "badge source-" + (scene ? scene.source : "none");
  showRows(index);
  const mine = index;
  pending = pending.then(() => renderScene(sceneIndex));
  await pending;
  if (mine !== index) return;  // a later step already took over
  const ids = present(sceneIndex, index);
  const on = new Set(ids);
  nodeEls.forEach((g, id) => g.classList.toggle("replay-absent", !on.has(id)));
  const nodes = document.getElementById("replay-nodes");
  nodes.replaceChildren(...(ids.length ? ids.map((id) => { const li = el("li"); li.append(el("code", null, id)); return li; }) : [el("li", "muted", strings.none)]));
  const box = document.getElementById("replay-node");
  if (!box.hidden && box.dataset.node) showNode(box.dataset.node);
  if (time) { const url = new URL(location.href); url.searchParams.set("at", time); url.searchParams.delete("row"); history.replaceState(null, "", url); }
  document.body.dataset.frame = String(index);
  document.body.dataset.present = ids.join(",");
  document.body.dataset.replaySource = scene ? scene.source : "";
  document.body.dataset.replayReady = "1";
}

function step(delta) { stop(); show(index + delta); }
function stop() { if (timer) { clearInterval(timer); timer = null; playButton.textContent = strings.play; } }
function play() {
  if (timer) { stop(); return; }
  if (index >= total - 1) show(0);
  playButton.textContent = strings.pause;
  timer = setInterval(() => { if (index >= total - 1) stop(); else show(index + 1); }, 700);
}

slider.addEventListener("input", () => { stop(); show(Number(slider.value)); });
document.querySelectorAll("[data-step]").forEach((b) => b.addEventListener("click", () => step(Number(b.dataset.step))));
playButton.addEventListener("click", play);
document.addEventListener("memviz:renderer", () => { renderedScene = undefined; show(index); });
host.parentElement.addEventListener("click", (ev) => {
  const g = ev.target.closest("g.node");
  if (g && g.dataset.memvizId) showNode(g.dataset.memvizId);
});
document.addEventListener("keydown", (ev) => {
  const target = ev.target instanceof Element ? ev.target : null;
  if (target && (target.closest("input:not([type=range]), textarea, select") || target === slider)) return;
  if (ev.ctrlKey || ev.metaKey || ev.altKey) return;
  if (ev.key === "ArrowLeft") { ev.preventDefault(); step(-1); }
  else if (ev.key === "ArrowRight") { ev.preventDefault(); step(1); }
});

// The report with the canvas as this page rendered it: the server's Markdown plus the SVG.
document.getElementById("replay-export").addEventListener("click", async () => {
  const button = document.getElementById("replay-export");
  const response = await fetch(button.dataset.reportUrl, { credentials: "same-origin" });
  let text = await response.text();
  const shown = mermaidView.active() ? host.parentElement.querySelector(".mermaidjs-host") : host;
  const svg = shown && shown.querySelector("svg");
  if (svg) {
    const clone = svg.cloneNode(true);
    clone.querySelectorAll(".replay-absent").forEach((g) => g.setAttribute("opacity", "0.2"));
    const markup = new XMLSerializer().serializeToString(clone);
    const b64 = btoa(unescape(encodeURIComponent(markup)));
    text += "\n## " + strings.snapshot + "\n\n" + (data.frames.t[index] || "") + "\n\n![canvas](data:image/svg+xml;base64," + b64 + ")\n";
  }
  const blob = new Blob([text], { type: "text/markdown;charset=utf-8" });
  const a = document.createElement("a");
  a.href = URL.createObjectURL(blob);
  a.download = decodeURIComponent(button.dataset.reportUrl.split("/").slice(-3, -2)[0]) + "-report.md";
  document.body.append(a);
  a.click();
  a.remove();
});

show(index);
