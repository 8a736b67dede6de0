// Draws a canvas scene (canvases/canvas_scene.py) as one SVG in mermaid's flowchart look: its
// shapes, 16px labels wrapped at 200px, basis-curve edges with its arrowheads, subgraph boxes.
// Groups the user collapsed become one summary node, as render_body does for mermaid.js.
// draw(scene, {collapsed, title}) -> {svg: string, model}; no DOM writes here.
import { statuses } from "./statuses.js";
import { shapeSize, shapeSvg, SHAPES, NO_LABEL, labelOffset, basis, dashedPieces, clip, MARKERS, markerDefs } from "./canvas-shapes.js";
import { layout, throughLabel, around, selfLoop } from "./canvas-layout.js";

const FONT_SIZE = 16;
const LINE_H = 24; // mermaid's labels: line-height 1.5
const WRAP = 200; // mermaid's wrappingWidth
const FONT = `${FONT_SIZE}px "Noto Sans SC", sans-serif`;
// the statuses' words, from canvases/mermaid/vocabulary.py (static/js/statuses.js)
const { urgency: URGENCY, vocabulary: STATUS_WORDS } = statuses;
const VOCABULARY = new Set(STATUS_WORDS);

// ---- text -------------------------------------------------------------------------------
// how wide a text is in FONT, in px: the page's canvas 2D context unless one is given (node)
let widthOf = null;
const widthCache = new Map();
function useMeasure(fn) { widthOf = fn; widthCache.clear(); }
function textWidth(s) {
  let w = widthCache.get(s);
  if (w === undefined) {
    if (!widthOf) {
      const ctx = document.createElement("canvas").getContext("2d");
      ctx.font = FONT;
      widthOf = (text) => ctx.measureText(text).width;
    }
    w = widthOf(s);
    if (widthCache.size > 50000) widthCache.clear();
    widthCache.set(s, w);
  }
  return w;
}
const TOKENS = /[\u2e80-\u9fff\uac00-\ud7af\uf900-\ufaff\uff00-\uffef]|\s+|[^\s\u2e80-\u9fff\uac00-\ud7af\uf900-\ufaff\uff00-\uffef]+/g;
const NO_LINE_START = /^[，。、；：！？）」』】〉》,.;:!?)\]}]$/; // punctuation that never starts a line
const LONG_WORD = 320; // a word up to this wide stays whole (timestamps, paths); longer ones break
// Lines longer than WRAP break at spaces and between CJK characters, as mermaid's labels do.
// Widths are summed per token (each measured once and cached), not measured per line.
function wrap(line) {
  const tokens = line.match(TOKENS) || [line];
  let total = 0;
  for (const t of tokens) total += textWidth(t);
  if (total <= WRAP) return [[line, total]];
  const out = [];
  let cur = "", w = 0;
  // a line broken at a space keeps it at its end, so the text still reads as written
  // (textContent, copy and paste, find) while the space adds nothing visible
  const push = (space) => { const t = cur.trim(); if (t) out.push([t + (space || /\s$/.test(cur) ? " " : ""), textWidth(t)]); cur = ""; w = 0; };
  for (const tok of tokens) {
    const tw = textWidth(tok);
    if (w + tw <= WRAP || (!cur.trim() && tw <= LONG_WORD) || NO_LINE_START.test(tok)) { cur += tok; w += tw; continue; }
    if (/^\s+$/.test(tok)) { push(true); continue; }
    if (tw > LONG_WORD) {
      for (const ch of tok) { const cw = textWidth(ch); if (w + cw > WRAP) push(); cur += ch; w += cw; }
      continue;
    }
    push();
    cur = tok; w = tw;
  }
  push();
  return out.length ? out : [[line, total]];
}
function measure(lines) {
  const wrapped = [];
  let w = 1;
  for (const l of lines) for (const [text, width] of wrap(l)) { wrapped.push(text); w = Math.max(w, width); }
  return { lines: wrapped, tw: Math.min(w, LONG_WORD), th: wrapped.length * LINE_H };
}

const esc = (s) => String(s).replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/>/g, "&gt;").replace(/"/g, "&quot;");
const textColour = (css) => { const m = /(?:^|;)color:([^;]+)/.exec(css || ""); return m ? `fill:${m[1]}` : ""; };
const shapeCss = (css) => (css || "").split(";").filter((d) => d && !d.startsWith("color:")).join(";");

// Bold/italic runs of the author's label (canvases/scene_labels.py): each wrapped line is found
// in the line it came from and drawn as tspans of its runs' styles.
const RUN_STYLE = { b: "font-weight:bold", i: "font-style:italic", bi: "font-weight:bold;font-style:italic" };
function styledLines(wrapped, rich) {
  if (!rich) return null;
  const flat = rich.map((runs) => { const flags = []; let text = ""; for (const [t, f] of runs) { text += t; for (let i = 0; i < t.length; i++) flags.push(f); } return { text, flags }; });
  let li = 0, at = 0;
  return wrapped.map((piece) => {
    const want = piece.trim();
    let found = -1;
    while (li < flat.length && (found = flat[li].text.indexOf(want, at)) < 0) { li++; at = 0; }
    if (found < 0) return null;
    const { flags } = flat[li];
    const runs = [];
    for (let i = 0; i < want.length; i++) {
      const f = flags[found + i] || "";
      if (runs.length && runs[runs.length - 1][1] === f) runs[runs.length - 1][0] += want[i]; else runs.push([want[i], f]);
    }
    at = found + want.length;
    return runs;
  });
}
// The author's style on every outline of a node's shape (a stacked or framed shape has several)
// and its strokes on the shape's inner lines; a comment's invisible box stays invisible.
const lineCss = (css) => css.split(";").filter((d) => d.startsWith("stroke")).join(";");
function authorCss(svg, css, shape) {
  if (!css) return svg;
  const outline = ` data-css="${esc(shapeCss(css))}"`, line = lineCss(css) ? ` data-css="${esc(lineCss(css))}"` : "";
  return svg.replace(/ class="shape( [\w-]+)?"/g, (m, extra) => (extra === " shape-text" && shape !== "text" ? m : m + outline))
    .replace(/ class="shape-line"/g, (m) => m + line);
}
// a group's title, bold/italic where the author formatted it (a markdown string, <b>, <i>)
const titleText = (g) => (g.titleRich ? g.titleRich.map(([t, f]) => (f ? `<tspan data-css="${RUN_STYLE[f]}">${esc(t)}</tspan>` : esc(t))).join("") : esc(g.title || g.id));
function labelSvg(lines, cls, rich) {
  const top = -(lines.length * LINE_H) / 2 + LINE_H / 2;
  const styled = styledLines(lines, rich);
  let s = `<text class="${cls}" text-anchor="middle" dominant-baseline="central">`;
  lines.forEach((l, i) => {
    const runs = styled && styled[i];
    const body = runs ? runs.map(([t, f]) => (f ? `<tspan data-css="${RUN_STYLE[f]}">${esc(t)}</tspan>` : esc(t))).join("") : esc(l);
    s += `<tspan x="0" y="${(top + i * LINE_H).toFixed(1)}">${body}</tspan>`;
  });
  return s + "</text>";
}

// ---- the group tree with collapsed groups as summary nodes ----------------------------------
function statusSummary(members) {
  const counts = {};
  for (const n of members) counts[n.key] = (counts[n.key] || 0) + 1;
  const key = URGENCY.find((k) => counts[k]) || "none";
  const detail = STATUS_WORDS.filter((k) => counts[k]).map((k) => `${counts[k]} ${k}`).join(", ");
  return { key, detail };
}

// group id -> the ids (nodes and groups) inside it, at any depth
function nodeIdsInside(scene, groups) {
  const inside = new Map([...groups.keys()].map((id) => [id, new Set()]));
  const up = (gid, id) => { for (let g = gid, guard = 0; g && inside.has(g) && guard < 100; g = groups.get(g).parent, guard++) inside.get(g).add(id); };
  for (const n of scene.nodes) if (n.group) up(n.group, n.id);
  for (const g of groups.values()) if (g.parent) up(g.parent, g.id);
  return inside;
}
// mermaid's rule: a group no edge crosses is laid out on its own, in its `direction` or else
// across its parent's (TB inside LR, LR inside TB); a group an edge crosses follows its parent.
function directions(scene, groups, blocks, inside) {
  const crossed = new Set();
  for (const e of scene.edges) {
    for (const [gid, ids] of inside) if (ids.has(e.s) !== ids.has(e.t) && e.s !== gid && e.t !== gid) crossed.add(gid);
  }
  const dirOf = new Map([[null, normalDir(scene.direction)]]);
  for (const g of groups.values()) {
    const parent = dirOf.get(g.parent && dirOf.has(g.parent) ? g.parent : null);
    const dir = crossed.has(g.id) || g.auto ? parent : g.dir ? normalDir(g.dir) : parent === "TB" ? "LR" : "TB";
    dirOf.set(g.id, dir);
    if (blocks.has(g.id)) blocks.get(g.id).dir = dir;
  }
}
const normalDir = (d) => { const u = (d || "TB").toUpperCase(); return u === "TD" ? "TB" : u; };

function build(scene, collapsed) {
  // canvases/canvas_scene.py sends unique ids and a shallow tree; whatever a scene holds, a
  // group id taken twice or by a node is ignored, and a parent must come earlier in the
  // document, so the tree below has no cycle (a loop here froze the tab).
  const nodeIds = new Set(scene.nodes.map((n) => n.id));
  const groups = new Map();
  for (const g of scene.groups) if (!groups.has(g.id) && !nodeIds.has(g.id)) groups.set(g.id, g);
  const parents = new Map();
  for (const g of groups.values()) parents.set(g.id, g.parent != null && parents.has(g.parent) ? g.parent : null);
  const parentOfGroup = (id) => parents.get(id) || null;
  // the outermost collapsed group holding a group (or null): what a hidden thing shows as
  const shownAs = new Map();
  const outermost = (gid) => {
    if (shownAs.has(gid)) return shownAs.get(gid);
    let found = null;
    for (let g = gid, guard = 0; g && guard < 100; g = parentOfGroup(g), guard++) if (collapsed.has(g)) found = g;
    shownAs.set(gid, found);
    return found;
  };
  const members = new Map(); // collapsed group -> nodes inside it
  const visibleNodes = [];
  for (const n of scene.nodes) {
    const hiddenIn = n.group && groups.has(n.group) ? outermost(n.group) : null;
    if (hiddenIn) { if (!members.has(hiddenIn)) members.set(hiddenIn, []); members.get(hiddenIn).push(n); }
    else visibleNodes.push(n);
  }
  const root = { id: "\u0000root", children: [] };
  const blocks = new Map([[null, root]]);
  const leaves = new Map();
  // groups first (document order), so a group's box sits where it was written
  for (const g of groups.values()) {
    if (outermost(g.id) && outermost(g.id) !== g.id) continue; // inside a collapsed group
    if (collapsed.has(g.id)) {
      const inside = members.get(g.id) || [];
      const { key, detail } = statusSummary(inside);
      const lines = [g.title || g.id, `${inside.length} ${inside.length === 1 ? "node" : "nodes"}${detail ? " · " + detail : ""}`];
      const leaf = { id: g.id, summary: true, group: g, lines, key, shape: "subroutine", members: inside };
      leaves.set(g.id, leaf);
      continue;
    }
    blocks.set(g.id, { id: g.id, group: g, children: [] });
  }
  const blockOf = (gid) => blocks.get(gid && groups.has(gid) ? gid : null) || root;
  const order = [];
  for (const g of groups.values()) {
    if (blocks.has(g.id)) order.push(["block", g]);
    else if (leaves.has(g.id)) order.push(["leaf", g]);
  }
  for (const n of visibleNodes) {
    const leaf = { id: n.id, node: n, lines: n.lines, key: n.key, shape: n.shape };
    leaves.set(n.id, leaf);
    blockOf(n.group).children.push(leaf);
  }
  directions(scene, groups, blocks, nodeIdsInside(scene, groups));
  for (const [kind, g] of order) {
    const parent = blockOf(parentOfGroup(g.id));
    const child = kind === "block" ? blocks.get(g.id) : leaves.get(g.id);
    // a group sits among its parent's nodes where its first member would be
    parent.children.push(child);
  }
  // endpoints: hidden nodes show as their collapsed group; duplicates and self-loops go
  const nodeById = new Map(scene.nodes.map((n) => [n.id, n]));
  const endpointOf = (id) => {
    if (leaves.has(id) || blocks.has(id)) return id;
    const n = nodeById.get(id);
    if (n && n.group && groups.has(n.group)) return outermost(n.group);
    return groups.has(id) ? outermost(id) : null;
  };
  const edges = [];
  const seen = new Set();
  scene.edges.forEach((e, k) => {
    const a = endpointOf(e.s), b = endpointOf(e.t);
    if (!a || !b) return;
    const merged = a !== e.s || b !== e.t;
    // `~~~` is laid out (it orders a kanban's columns in mermaid) and never drawn
    if (e.kind === "invisible" && (merged || a === b)) return;
    if (a === b && merged) return; // a self-loop is drawn, an edge inside a collapsed group not
    const key = a + "\u0000" + b;
    if (merged && seen.has(key)) return;
    seen.add(key);
    edges.push({ a, b, e: merged ? { kind: "arrow" } : e, k });
  });
  // the block a leaf or a group box sits in
  const containerOf = (id) => {
    const leaf = leaves.get(id);
    if (leaf && leaf.node) return blockOf(leaf.node.group);
    return blockOf(parentOfGroup(id));
  };
  const chain = (block) => { const out = []; for (let b = block, guard = 0; b && guard < 100; b = b.group ? blockOf(parentOfGroup(b.id)) : null, guard++) { out.push(b); if (!b.group) break; } return out; };
  const commonBlock = (a, b) => { const up = new Set(chain(containerOf(a))); return chain(containerOf(b)).find((x) => up.has(x)) || root; };
  return { root, leaves, blocks, edges, commonBlock };
}

function sortByPosition(model) {
  const pos = (id) => model.boxes.get(id);
  model.order = [...model.leaves.keys()].filter((id) => pos(id)).sort((p, q) => {
    const a = pos(p), b = pos(q);
    return Math.abs(a.y - b.y) > 1 ? a.y - b.y : a.x - b.x;
  });
}

function draw(scene, options) {
  const collapsed = options.collapsed || new Set();
  const idPrefix = options.idPrefix || "mc";
  const { root, leaves, blocks, edges, commonBlock } = build(scene, collapsed);
  for (const leaf of leaves.values()) {
    const m = measure(leaf.lines);
    leaf.lines = m.lines;
    const s = shapeSize(leaf.shape, m.tw, m.th);
    leaf.w = s.w; leaf.h = s.h;
  }
  for (const b of blocks.values()) if (b.group) b.titleW = textWidth(b.group.title || b.group.id);
  // An edge label is a box of its own in the layout, on the edge's way between its ends (as
  // dagre does for mermaid): the layout gives it room, so no node is drawn over it.
  const layoutEdges = edges.map(({ a, b }) => ({ a, b }));
  const labelBox = new Map(); // edge index -> {id, second: index of the edge's second half}
  edges.forEach(({ a, b, e }, i) => {
    if (a === b && leaves.has(a) && e.kind !== "invisible") leaves.get(a).loop = true;
    if (!e.label || a === b || !leaves.has(a) || !leaves.has(b)) return;
    const m = measure(e.label.split("\n"));
    const id = "\u0001label" + i;
    commonBlock(a, b).children.push({ id, w: m.tw + 8, h: m.th, labelOf: i });
    layoutEdges[i] = { a, b: id };
    labelBox.set(i, { id, second: layoutEdges.length });
    layoutEdges.push({ a: id, b });
  });
  const placed = layout(root, layoutEdges, scene.direction);
  const boxes = placed.boxes;
  const model = { leaves, blocks, edges, boxes, width: placed.width, height: placed.height, scene };
  sortByPosition(model);
  const parts = [];
  const titleParts = [];
  // groups (outermost first, so nested boxes paint above their parents)
  const depths = new Map(); // parents come first (build), so one pass gives every depth
  for (const g of scene.groups) if (!depths.has(g.id)) depths.set(g.id, depths.has(g.parent) ? depths.get(g.parent) + 1 : 0);
  const depth = (b) => depths.get(b.id) || 0;
  [...blocks.values()].filter((b) => b.group).sort((p, q) => depth(p) - depth(q)).forEach((b) => {
    const box = boxes.get(b.id);
    if (!box) return;
    const g = b.group;
    const cls = g.auto ? "cluster auto" : "cluster";
    parts.push(`<g class="${cls}" data-group="${esc(g.id)}"><rect class="cluster-box" x="${(box.x - box.w / 2).toFixed(1)}" y="${(box.y - box.h / 2).toFixed(1)}" width="${box.w.toFixed(1)}" height="${box.h.toFixed(1)}"${g.css ? ` data-css="${esc(shapeCss(g.css))}"` : ""}/></g>`);
    // titles go above the edges (with a halo), so an edge into the group never hides one
    titleParts.push(`<g class="${cls}"><text class="cluster-title" x="${(box.x - box.w / 2 + 10).toFixed(1)}" y="${(box.y - box.h / 2 + 20).toFixed(1)}" role="button" tabindex="-1" data-toggle="${esc(g.id)}"><title>collapse this group</title>${titleText(g)}</text></g>`);
  });
  // edges
  const groupParent = new Map(scene.groups.map((g) => [g.id, g.parent]));
  const groupsOf = (id) => {
    const leaf = leaves.get(id);
    const out = [];
    let g = leaf ? (leaf.node ? leaf.node.group : groupParent.get(id)) : groupParent.get(id);
    for (let guard = 0; g && guard < 100; g = groupParent.get(g), guard++) out.push(g);
    return out;
  };
  const outerOnly = (id, other) => { const up = groupsOf(other); const mine = groupsOf(id).filter((g) => !up.includes(g)); return mine.length ? [mine[mine.length - 1]] : []; };
  let members = null; // group -> the drawn leaves inside it, at any depth
  const inside = (g) => {
    if (!members) {
      members = new Map();
      for (const id of leaves.keys()) if (boxes.has(id)) for (const h of groupsOf(id)) { if (!members.has(h)) members.set(h, []); members.get(h).push(id); }
    }
    return members.get(g) || [];
  };
  const edgeParts = [], labelParts = [];
  edges.forEach(({ a, b, e, k }, index) => {
    const ba = boxes.get(a), bb = boxes.get(b);
    if (!ba || !bb || e.kind === "invisible") return;
    const through = labelBox.get(index);
    const at = through && boxes.get(through.id);
    const route = a === b ? selfLoop(ba) : at ? throughLabel(placed.routes.get(index) || [], at, placed.routes.get(through.second) || [], ba, bb) : placed.routes.get(index) || [];
    const first = route.length ? route[0] : [bb.x, bb.y];
    const last = route.length ? route[route.length - 1] : [ba.x, ba.y];
    const la = leaves.get(a), lb = leaves.get(b);
    let pts = [clip(ba, first, la && la.shape), ...route, clip(bb, last, lb && lb.shape)];
    // the parts inside a group only one end is in run straight to the node: around its siblings
    const own = [...outerOnly(a, b), ...outerOnly(b, a)];
    if (own.length) pts = around(pts, own.flatMap((g) => inside(g)).filter((id) => id !== a && id !== b).map((id) => boxes.get(id)));
    const [ms, me] = MARKERS[e.kind] || MARKERS.arrow;
    const kind = /^thick/.test(e.kind) ? "thick" : /^dotted/.test(e.kind) ? "dotted" : "normal";
    const ds = kind === "dotted" ? dashedPieces(pts) : [basis(pts)];
    ds.forEach((d, i) => {
      const start = i === 0 && ms ? ` marker-start="url(#${idPrefix}-${ms}-start)"` : "";
      const end = i === ds.length - 1 && me ? ` marker-end="url(#${idPrefix}-${me}-end)"` : "";
      edgeParts.push(`<path class="edge edge-${kind}" d="${d}"${start}${end}${e.css ? ` data-css="${esc(e.css)}"` : ""} data-edge="${k}"/>`);
    });
    if (e.label) {
      // the label sits on the part of the edge outside any group box only one end is in, so
      // it never covers that group's title
      const outer = (id, other) => groupsOf(id).find((g) => !groupsOf(other).includes(g));
      const ga = outer(a, b), gb = outer(b, a);
      const p0 = ga && boxes.get(ga) ? clip(boxes.get(ga), pts[1] || pts[0]) : pts[0];
      const p1 = gb && boxes.get(gb) ? clip(boxes.get(gb), pts[pts.length - 2] || pts[0]) : pts[pts.length - 1];
      const mid = pts[Math.floor(pts.length / 2)];
      let cx = route.length ? mid[0] : (p0[0] + p1[0]) / 2;
      let cy = route.length ? mid[1] : (p0[1] + p1[1]) / 2;
      if (at) { cx = at.x; cy = at.y; }
      const m = measure(e.label.split("\n"));
      labelParts.push(`<g class="edge-label" data-edge="${k}" transform="translate(${cx.toFixed(1)},${cy.toFixed(1)})"><rect x="${(-m.tw / 2 - 2).toFixed(1)}" y="${(-m.th / 2).toFixed(1)}" width="${(m.tw + 4).toFixed(1)}" height="${m.th}"/>${labelSvg(m.lines, "label", e.rich).replace('class="label"', `class="label"${textColour(e.css) ? ` data-css="${esc(textColour(e.css))}"` : ""}`)}</g>`);
    }
  });
  parts.push(`<g class="edges">${edgeParts.join("")}</g>`, `<g class="cluster-titles">${titleParts.join("")}</g>`, `<g class="edge-labels">${labelParts.join("")}</g>`);
  // nodes, in reading order (that is also the Tab order)
  const nodeParts = [];
  model.labels = new Map();
  for (const id of model.order) {
    const leaf = leaves.get(id);
    const box = boxes.get(id);
    const n = leaf.node;
    const cls = n ? n.cls.join(" ") : `mvz_${leaf.key}`;
    const css = n ? n.css : "";
    const name = n ? `${n.id}: ${n.lines.join(", ")}` : `group ${leaf.group.title || leaf.id}, collapsed, ${leaf.lines[1]}`;
    const drawnShape = SHAPES.has(leaf.shape) ? leaf.shape : "rect";
    const shape = authorCss(shapeSvg(drawnShape, box.w, box.h) + "/>", css, drawnShape);
    const textCss = textColour(css);
    const summary = leaf.summary ? ` data-group="${esc(id)}"` : "";
    nodeParts.push(`<g class="node ${leaf.summary ? "collapsed-group " : ""}${esc(cls)}" data-memviz-id="${esc(id)}"${summary} data-shape="${drawnShape}" transform="translate(${box.x.toFixed(1)},${box.y.toFixed(1)})" tabindex="0" role="button" aria-label="${esc(name.slice(0, 300))}">${shape}</g>`);
    const shown = NO_LABEL.has(drawnShape) ? [] : leaf.lines;
    const dy = labelOffset(drawnShape, box.h, shown.length * LINE_H);
    model.labels.set(id, labelSvg(shown, "label", n && n.rich).replace('class="label"', `class="label"${textCss ? ` data-css="${esc(textCss)}"` : ""}${dy ? ` transform="translate(0,${dy.toFixed(1)})"` : ""}`));
  }
  parts.push(`<g class="nodes">${nodeParts.join("")}</g>`);
  const title = esc(scene.accTitle || options.title || "canvas"); // the author's accTitle first
  const svg = `<svg xmlns="http://www.w3.org/2000/svg" class="mc" id="${idPrefix}" role="group" aria-roledescription="canvas" aria-labelledby="${idPrefix}-title" width="100%" height="100%">` +
    `<title id="${idPrefix}-title">${title}</title>${scene.accDescr ? `<desc>${esc(scene.accDescr)}</desc>` : ""}${markerDefs(idPrefix)}<g class="mc-content">${parts.join("")}</g></svg>`;
  return { svg, model };
}

// The server writes only what differs from the usual (canvases/canvas_scene.py); fill it in.
function normalize(scene) {
  for (const n of scene.nodes) {
    n.shape = n.shape || "rect";
    n.key = n.key || "none";
    n.status = n.status || (VOCABULARY.has(n.key) ? n.key : "");
    n.cls = n.cls || ["mvz_" + n.key];
    n.css = n.css || "";
    n.ts = n.ts || "";
    n.group = n.group || null;
  }
  scene.groups = scene.groups || [];
  scene.edges = scene.edges || [];
  return scene;
}

// The agent's styles are set through the CSSOM, never as style attributes in markup, so a
// Content-Security-Policy without 'unsafe-inline' styles still shows them.
function applyCss(root) {
  for (const el of root.querySelectorAll("[data-css]")) {
    for (const decl of el.dataset.css.split(";")) {
      const at = decl.indexOf(":");
      if (at > 0) el.style.setProperty(decl.slice(0, at).trim(), decl.slice(at + 1).trim());
    }
    el.removeAttribute("data-css");
  }
}

// A scene drawn into `host` as a static picture (revision, replay, offline file): the SVG,
// its labels (escaped text), its styles, sized to the drawing. Returns {svg, model}.
function drawStatic(host, scene, options) {
  const drawn = draw(normalize(scene), options);
  host.innerHTML = drawn.svg;
  const svg = host.querySelector("svg");
  for (const [id, label] of drawn.model.labels) {
    const g = svg.querySelector(`g.node[data-memviz-id="${CSS.escape(id)}"]`);
    if (g) g.insertAdjacentHTML("beforeend", label);
  }
  applyCss(svg);
  svg.setAttribute("viewBox", `-8 -8 ${drawn.model.width + 16} ${drawn.model.height + 16}`);
  svg.setAttribute("width", drawn.model.width + 16);
  svg.setAttribute("height", drawn.model.height + 16);
  svg.classList.add("static");
  return { svg, model: drawn.model };
}

const resetMeasures = () => widthCache.clear();

export { applyCss, normalize, draw, drawStatic, measure, textWidth, useMeasure, FONT, FONT_SIZE, LINE_H, resetMeasures };
