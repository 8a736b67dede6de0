// Layered (Sugiyama-style) layout of a canvas scene, group by group: each expanded group is laid
// out on its own and becomes one box in its parent's layout, so no layout step ever sees more
// than one group's children (dagre's whole-graph passes were the wall at 1000 nodes).
// Pure functions, no DOM: layout(tree, direction) -> positions and edge routes.
const RANK_SEP = 50; // mermaid's flowchart rankSpacing / nodeSpacing
const NODE_SEP = 50;
const DUMMY_W = 10;
const LOOP_W = 30; // how far a self-loop reaches right of its node (canvas-draw.js selfLoop)
const GROUP_PAD = 16;
const TITLE_H = 30;
const SWEEPS = 6;

// ---- one block: rank, order, place --------------------------------------------------------
function layered(items, links) {
  // items: [{w, h}], links: [[i, j]] (indices into items) -> {x[], y[], routes: Map(linkIndex -> points)}
  const n = items.length;
  const out = Array.from({ length: n }, () => []);
  const seenPair = new Set();
  const uniq = [];
  links.forEach(([a, b], k) => {
    if (a === b) return;
    const key = a + ">" + b;
    if (seenPair.has(key)) return;
    seenPair.add(key);
    uniq.push({ a, b, k });
  });
  // 1. break cycles: DFS in document order, edges to a node on the stack are reversed
  const state = new Uint8Array(n);
  const reversed = new Set();
  for (const e of uniq) out[e.a].push(e);
  for (let start = 0; start < n; start++) {
    if (state[start]) continue;
    const stack = [[start, 0]];
    state[start] = 1;
    while (stack.length) {
      const top = stack[stack.length - 1];
      const edges = out[top[0]];
      if (top[1] >= edges.length) { state[top[0]] = 2; stack.pop(); continue; }
      const e = edges[top[1]++];
      if (state[e.b] === 1) reversed.add(e);
      else if (state[e.b] === 0) { state[e.b] = 1; stack.push([e.b, 0]); }
    }
  }
  // An edge's label box sits on it (a -> label -> b): when breaking a cycle turned one half
  // around, the other turns too, so the label lies between the ends (b -> label -> a) as dagre
  // puts it, not past one end with the edge detouring to it.
  const halves = new Map();
  const half = (v) => { if (!halves.has(v)) halves.set(v, {}); return halves.get(v); };
  for (const e of uniq) { if (items[e.b].label) half(e.b).into = e; if (items[e.a].label) half(e.a).out = e; }
  for (const { into, out } of halves.values()) if (into && out && reversed.has(into) !== reversed.has(out)) { reversed.add(into); reversed.add(out); }
  const dag = uniq.map((e) => (reversed.has(e) ? { a: e.b, b: e.a, k: e.k, rev: true } : e));
  const preds = Array.from({ length: n }, () => []);
  const succs = Array.from({ length: n }, () => []);
  for (const e of dag) { succs[e.a].push(e); preds[e.b].push(e); }
  // 2. longest-path ranks (Kahn order), then sources move down next to their first successor
  const indeg = preds.map((p) => p.length);
  const rank = new Int32Array(n);
  const queue = [];
  for (let i = 0; i < n; i++) if (!indeg[i]) queue.push(i);
  for (let q = 0; q < queue.length; q++) {
    const v = queue[q];
    for (const e of succs[v]) {
      if (rank[e.b] < rank[v] + 1) rank[e.b] = rank[v] + 1;
      if (--indeg[e.b] === 0) queue.push(e.b);
    }
  }
  for (let i = 0; i < n; i++) {
    if (!preds[i].length && succs[i].length) rank[i] = Math.max(0, Math.min(...succs[i].map((e) => rank[e.b])) - 1);
  }
  // 3. long edges get one dummy per rank they cross
  const nodes = items.map((it, i) => ({ w: it.w, h: it.h, rank: rank[i], up: [], down: [], item: i }));
  const chains = [];
  for (const e of dag) {
    let prev = e.a;
    const chain = [];
    for (let r = rank[e.a] + 1; r < rank[e.b]; r++) {
      const d = nodes.length;
      nodes.push({ w: DUMMY_W, h: 0, rank: r, up: [], down: [], item: -1 });
      nodes[prev].down.push(d); nodes[d].up.push(prev);
      chain.push(d);
      prev = d;
    }
    nodes[prev].down.push(e.b); nodes[e.b].up.push(prev);
    chains.push({ e, chain });
  }
  // 4. order within ranks: DFS order first, then barycenter sweeps keeping the fewest crossings
  const maxRank = nodes.reduce((m, v) => Math.max(m, v.rank), 0);
  const layers = Array.from({ length: maxRank + 1 }, () => []);
  const visited = new Uint8Array(nodes.length);
  const visit = (start) => {
    const stack = [start];
    while (stack.length) {
      const v = stack.pop();
      if (visited[v]) continue;
      visited[v] = 1;
      layers[nodes[v].rank].push(v);
      for (let k = nodes[v].down.length - 1; k >= 0; k--) if (!visited[nodes[v].down[k]]) stack.push(nodes[v].down[k]);
    }
  };
  for (let i = 0; i < nodes.length; i++) if (!nodes[i].up.length) visit(i);
  for (let i = 0; i < nodes.length; i++) visit(i);
  const pos = new Float64Array(nodes.length);
  const setPos = () => layers.forEach((layer) => layer.forEach((v, i) => { pos[v] = i; }));
  setPos();
  let best = layers.map((l) => l.slice());
  let bestCross = crossings(layers, nodes, pos);
  for (let s = 0; s < SWEEPS && bestCross > 0; s++) {
    const down = s % 2 === 0;
    const order = down ? layers.keys() : [...layers.keys()].reverse();
    for (const r of order) {
      const layer = layers[r];
      const bary = new Map();
      for (const v of layer) {
        const nb = down ? nodes[v].up : nodes[v].down;
        bary.set(v, nb.length ? nb.reduce((t, u) => t + pos[u], 0) / nb.length : pos[v]);
      }
      layer.sort((p, q) => bary.get(p) - bary.get(q) || pos[p] - pos[q]);
      layer.forEach((v, i) => { pos[v] = i; });
    }
    const c = crossings(layers, nodes, pos);
    if (c < bestCross) { bestCross = c; best = layers.map((l) => l.slice()); }
  }
  best.forEach((l, r) => { layers[r] = l; });
  setPos();
  // 5. y by rank, x by repeated pulls towards the neighbours' mean, keeping order and gaps
  const rankH = layers.map((l) => l.reduce((m, v) => Math.max(m, nodes[v].h), 0));
  const rankY = [];
  let y = 0;
  // a rank of edge labels only sits half a gap from its neighbours, as in dagre (mermaid)
  const labelRank = layers.map((l) => l.some((v) => v < n && items[v].label) && l.every((v) => v >= n || items[v].label));
  for (let r = 0; r <= maxRank; r++) { rankY.push(y + rankH[r] / 2); y += rankH[r] + (labelRank[r] || labelRank[r + 1] ? RANK_SEP / 2 : RANK_SEP); }
  const x = new Float64Array(nodes.length);
  for (const layer of layers) {
    let cursor = 0;
    for (const v of layer) { x[v] = cursor + nodes[v].w / 2; cursor += nodes[v].w + NODE_SEP; }
  }
  for (let it = 0; it < 8; it++) {
    const down = it % 2 === 0;
    const order = down ? [...layers.keys()] : [...layers.keys()].reverse();
    for (const r of order) {
      const layer = layers[r];
      const want = layer.map((v) => {
        const nb = down ? nodes[v].up : nodes[v].down;
        const other = down ? nodes[v].down : nodes[v].up;
        const all = nb.length ? nb : other;
        return all.length ? all.reduce((t, u) => t + x[u], 0) / all.length : x[v];
      });
      place(layer, want, nodes, x);
    }
  }
  let minX = Infinity;
  for (let v = 0; v < nodes.length; v++) minX = Math.min(minX, x[v] - nodes[v].w / 2);
  const X = [], Y = [];
  for (let i = 0; i < n; i++) { X.push(x[i] - minX); Y.push(rankY[rank[i]]); }
  const routes = new Map();
  for (const { e, chain } of chains) {
    if (!chain.length) continue;
    let pts = chain.map((d) => [x[d] - minX, rankY[nodes[d].rank]]);
    if (e.rev) pts = pts.reverse();
    routes.set(e.k, pts);
  }
  // the original links that were duplicates share the route of their first copy
  const firstOf = new Map(uniq.map((u) => [u.a + ">" + u.b, u.k]));
  links.forEach(([a, b], k) => {
    if (routes.has(k)) return;
    const first = firstOf.get(a + ">" + b);
    if (first !== undefined && routes.has(first)) routes.set(k, routes.get(first));
  });
  return { x: X, y: Y, routes };
}

function crossings(layers, nodes, pos) {
  let total = 0;
  for (let r = 0; r + 1 < layers.length; r++) {
    const pairs = [];
    for (const v of layers[r]) for (const u of nodes[v].down) pairs.push([pos[v], pos[u]]);
    if (pairs.length < 2) continue;
    pairs.sort((p, q) => p[0] - q[0] || p[1] - q[1]);
    // inversions of the lower ends = crossings (a Fenwick tree over positions)
    const size = layers[r + 1].length + 1;
    const tree = new Int32Array(size + 1);
    for (let i = pairs.length - 1; i >= 0; i--) {
      for (let j = pairs[i][1]; j > 0; j -= j & -j) total += tree[j];
      for (let j = pairs[i][1] + 1; j <= size; j += j & -j) tree[j]++;
    }
  }
  return total;
}

// Nearest positions to `want` that keep the layer's order and minimum gaps: isotonic
// regression by pool-adjacent-violators on x minus the cumulative gaps.
function place(layer, want, nodes, x) {
  const m = layer.length;
  if (!m) return;
  const offset = new Float64Array(m);
  for (let i = 1; i < m; i++) offset[i] = offset[i - 1] + (nodes[layer[i - 1]].w + nodes[layer[i]].w) / 2 + NODE_SEP;
  const blocks = [];
  for (let i = 0; i < m; i++) {
    blocks.push({ sum: want[i] - offset[i], count: 1, start: i });
    while (blocks.length > 1) {
      const b = blocks[blocks.length - 1], a = blocks[blocks.length - 2];
      if (a.sum / a.count <= b.sum / b.count) break;
      a.sum += b.sum; a.count += b.count;
      blocks.pop();
    }
  }
  for (const b of blocks) {
    const v = b.sum / b.count;
    for (let i = b.start; i < b.start + b.count; i++) x[layer[i]] = v + offset[i];
  }
}

// ---- the group tree -------------------------------------------------------------------------
// tree: {id, children: [leaf {id, w, h} | group {id, title, titleW, children}]}, edges: [{a, b}]
// where a and b are ids of leaves or groups. Returns {boxes: Map(id -> {x, y, w, h}) (centres),
// routes: Map(edgeIndex -> points), width, height}.
function layout(tree, edges, direction) {
  const rootDir = (direction || "TD").toUpperCase(); // a group's own is its `dir`
  // Each id once, parents before children: a tree whose ids repeat (a node named like its
  // group, a group inside itself) would make the walks below loop or recurse without end.
  const parentOf = new Map([[tree.id, null]]);
  const pending = [tree];
  while (pending.length) {
    const g = pending.pop();
    g.children = g.children.filter((c) => !parentOf.has(c.id));
    for (const c of g.children) { parentOf.set(c.id, g); if (c.children) pending.push(c); }
  }
  const paths = new Map([[tree.id, []]]);
  const pathOf = (id) => { // memoised: linear in the tree, not in depth times edges
    if (paths.has(id)) return paths.get(id);
    const up = [];
    let g = parentOf.get(id);
    while (g && !paths.has(g.id)) { up.push(g); g = parentOf.get(g.id); }
    let path = g ? paths.get(g.id).concat([g]) : [];
    for (let i = up.length - 1; i >= 0; i--) { paths.set(up[i].id, path); path = path.concat([up[i]]); }
    return path;
  };
  // the block where each edge's ends part, and the children of that block that hold them
  const byBlock = new Map();
  edges.forEach((e, k) => {
    if (e.a === e.b || !parentOf.has(e.a) || !parentOf.has(e.b)) return;
    const pa = pathOf(e.a), pb = pathOf(e.b);
    let i = 0;
    while (i < pa.length && i < pb.length && pa[i] === pb[i]) i++;
    const block = pa[i - 1];
    if (!block) return;
    const ca = i < pa.length ? pa[i].id : e.a;
    const cb = i < pb.length ? pb[i].id : e.b;
    if (ca === cb) return;
    if (!byBlock.has(block)) byBlock.set(block, []);
    byBlock.get(block).push({ ca, cb, k });
  });
  const local = new Map(); // id -> {x, y} centre relative to its block's top-left
  const localRoutes = new Map(); // edge index -> {block, points}
  const size = new Map();
  const run = (g, isRoot) => {
    const dir = ((isRoot ? rootDir : g.dir) || rootDir).toUpperCase();
    const horizontal = dir === "LR" || dir === "RL";
    const kids = g.children.map((c) => {
      const s = c.children ? size.get(c.id) : { w: c.w, h: c.h };
      const loop = c.loop ? 2 * LOOP_W : 0; // room for a self-loop on the right, centre kept
      const item = horizontal ? { w: s.h, h: s.w + loop } : { w: s.w + loop, h: s.h };
      if (c.labelOf !== undefined) item.label = true;
      return item;
    });
    const index = new Map(g.children.map((c, i) => [c.id, i]));
    const list = byBlock.get(g) || [];
    const result = layered(kids, list.map((l) => [index.get(l.ca), index.get(l.cb)]));
    let xs = result.x, ys = result.y;
    const flip = (pts) => pts.map(([px, py]) => (horizontal ? [py, px] : [px, py]));
    if (horizontal) [xs, ys] = [ys, xs];
    const routeList = list.map((l, j) => (result.routes.has(j) ? flip(result.routes.get(j)) : null));
    if (dir === "BT") { ys = ys.map((v) => -v); routeList.forEach((r) => r && r.forEach((p) => { p[1] = -p[1]; })); }
    if (dir === "RL") { xs = xs.map((v) => -v); routeList.forEach((r) => r && r.forEach((p) => { p[0] = -p[0]; })); }
    let minX = Infinity, minY = Infinity, maxX = -Infinity, maxY = -Infinity;
    g.children.forEach((c, i) => {
      const s = c.children ? size.get(c.id) : c;
      minX = Math.min(minX, xs[i] - s.w / 2); maxX = Math.max(maxX, xs[i] + s.w / 2);
      minY = Math.min(minY, ys[i] - s.h / 2); maxY = Math.max(maxY, ys[i] + s.h / 2);
    });
    if (!g.children.length) { minX = minY = 0; maxX = maxY = 0; }
    // an edge's bends (a long edge routed beside its ranks) are inside the block too: else
    // they would leave their group's box, and at the top the drawing's view
    for (const r of routeList) {
      if (!r) continue;
      for (const [px, py] of r) {
        minX = Math.min(minX, px - DUMMY_W / 2); maxX = Math.max(maxX, px + DUMMY_W / 2);
        minY = Math.min(minY, py); maxY = Math.max(maxY, py);
      }
    }
    const pad = isRoot ? 0 : GROUP_PAD;
    const top = isRoot ? 0 : TITLE_H;
    let width = maxX - minX + 2 * pad;
    const titleW = (g.titleW || 0) + 2 * pad;
    let shift = 0;
    if (width < titleW) { shift = (titleW - width) / 2; width = titleW; }
    const dx = pad - minX + shift, dy = pad + top - minY;
    g.children.forEach((c, i) => local.set(c.id, { x: xs[i] + dx, y: ys[i] + dy }));
    list.forEach((l, j) => {
      if (routeList[j]) localRoutes.set(l.k, { block: g, points: routeList[j].map(([px, py]) => [px + dx, py + dy]) });
    });
    size.set(g.id, { w: width, h: maxY - minY + 2 * pad + top });
  };
  // groups children first, without recursion (a scene may nest thousands deep)
  const order = [];
  const todo = [tree];
  while (todo.length) {
    const g = todo.pop();
    order.push(g);
    for (const c of g.children) if (c.children) todo.push(c);
  }
  for (let i = order.length - 1; i >= 0; i--) run(order[i], order[i] === tree);
  // absolute positions, top-down
  const boxes = new Map();
  const origin = new Map([[tree.id, { x: 0, y: 0 }]]);
  for (const g of order) { // parents before children: each group's origin is set first
    const o = origin.get(g.id);
    for (const c of g.children) {
      const l = local.get(c.id);
      const s = c.children ? size.get(c.id) : c;
      const box = { x: o.x + l.x, y: o.y + l.y, w: s.w, h: s.h };
      boxes.set(c.id, box);
      if (c.children) origin.set(c.id, { x: box.x - s.w / 2, y: box.y - s.h / 2 });
    }
  }
  const routes = new Map();
  for (const [k, r] of localRoutes) {
    const o = origin.get(r.block.id);
    routes.set(k, r.points.map(([px, py]) => [px + o.x, py + o.y]));
  }
  const total = size.get(tree.id);
  return { boxes, routes, width: total.w, height: total.h };
}

// The route of a labelled edge: its two halves joined through the label box. The basis curve
// passes through a control point only between two in line with it, so the label's centre gets
// one on each side, where the edge enters and leaves the box.
function throughLabel(before, at, after, from, to) {
  const p = before.length ? before[before.length - 1] : [from.x, from.y];
  const q = after.length ? after[0] : [to.x, to.y];
  let ux = q[0] - p[0], uy = q[1] - p[1];
  const len = Math.hypot(ux, uy) || 1;
  ux /= len; uy /= len;
  const s = Math.min(Math.abs(ux) > 1e-6 ? at.w / 2 / Math.abs(ux) : Infinity, Math.abs(uy) > 1e-6 ? at.h / 2 / Math.abs(uy) : Infinity);
  return [...before, [at.x - ux * s, at.y - uy * s], [at.x, at.y], [at.x + ux * s, at.y + uy * s], ...after];
}
// Does the segment p-q pass through the box (shrunk by 2)? Liang-Barsky clipping.
function hits(p, q, b) {
  let t0 = 0, t1 = 1;
  const dx = q[0] - p[0], dy = q[1] - p[1];
  const sides = [[-dx, p[0] - (b.x - b.w / 2 + 2)], [dx, b.x + b.w / 2 - 2 - p[0]], [-dy, p[1] - (b.y - b.h / 2 + 2)], [dy, b.y + b.h / 2 - 2 - p[1]]];
  for (const [d, r] of sides) {
    if (!d) { if (r < 0) return false; continue; }
    const t = r / d;
    if (d < 0) t0 = Math.max(t0, t); else t1 = Math.min(t1, t);
    if (t0 > t1) return false;
  }
  return true;
}
// The route with a waypoint beside each box a segment of it crosses, on the side the segment
// passes nearer to (across the segment's main direction).
function around(pts, blockers) {
  const out = [pts[0]];
  for (let i = 1; i < pts.length; i++) {
    const p = out[out.length - 1], q = pts[i];
    const crossed = blockers.filter((b) => b && hits(p, q, b));
    crossed.sort((u, v) => Math.hypot(u.x - p[0], u.y - p[1]) - Math.hypot(v.x - p[0], v.y - p[1]));
    const vertical = Math.abs(q[1] - p[1]) >= Math.abs(q[0] - p[0]);
    for (const b of crossed) {
      if (vertical) {
        const t = Math.min(1, Math.max(0, (b.y - p[1]) / ((q[1] - p[1]) || 1)));
        const side = p[0] + (q[0] - p[0]) * t >= b.x ? 1 : -1;
        out.push([b.x + side * (b.w / 2 + 14), b.y]);
      } else {
        const t = Math.min(1, Math.max(0, (b.x - p[0]) / ((q[0] - p[0]) || 1)));
        const side = p[1] + (q[1] - p[1]) * t >= b.y ? 1 : -1;
        out.push([b.x, b.y + side * (b.h / 2 + 14)]);
      }
    }
    out.push(q);
  }
  return out;
}
// a loop out of the node's right side and back, as mermaid draws an edge from a node to itself
const selfLoop = (box) => { const x = box.x + box.w / 2, y = box.y, r = LOOP_W; return [[x, y - 10], [x + r, y - 22], [x + r, y + 22], [x, y + 10]]; };

export { layout, layered, throughLabel, around, selfLoop, RANK_SEP, NODE_SEP, TITLE_H, GROUP_PAD, LOOP_W };
