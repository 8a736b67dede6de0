// Facts of one diagram as drawn by mermaid.js and by memviz's renderer, read from each SVG in the
// page (tests/canvases/test_fidelity.py): nodes (text, shape, colours, bold/italic, group), edges
// (ends, ends' markers, label, stroke colour), label coverage and direction. Layout is free.
async (items) => {
  const drawing = await import("/static/js/canvas-draw.js"); // memviz's renderer, a module
  mermaid.initialize({ startOnLoad: false, securityLevel: "strict" });
  const squash = (s) => (s || "").replace(/\s+/g, "");
  const box = (el) => { const r = el.getBoundingClientRect(); return { x: r.x + r.width / 2, y: r.y + r.height / 2, w: r.width, h: r.height }; };
  const inside = (p, b) => Math.abs(p.x - b.x) <= b.w / 2 + 0.5 && Math.abs(p.y - b.y) <= b.h / 2 + 0.5;
  const overlap = (a, b) => Math.abs(a.x - b.x) < (a.w + b.w) / 2 - 1 && Math.abs(a.y - b.y) < (a.h + b.h) / 2 - 1;
  const colour = (v) => (!v || v === "none" ? "none" : v.replace(/\s+/g, ""));
  const end = (m) => (!m || m === "none" ? "none" : /circle/.test(m) ? "circle" : /cross/.test(m) ? "cross" : "arrow");
  const formatted = (root, bold) => {
    const out = [];
    root.querySelectorAll("*").forEach((el) => {
      if (el.children.length) return;
      const s = getComputedStyle(el);
      const on = bold ? parseInt(s.fontWeight, 10) >= 600 : s.fontStyle === "italic";
      if (on && el.textContent.trim()) out.push(squash(el.textContent));
    });
    return out.sort();
  };
  // which way an invisible link goes on the page (mermaid lays `~~~` out, draws nothing)
  const way = (p, q) => {
    if (!p || !q) return "?";
    const dx = q.x - p.x, dy = q.y - p.y;
    return Math.abs(dy) >= Math.abs(dx) ? (dy > 0 ? "TB" : "BT") : (dx > 0 ? "LR" : "RL");
  };
  function direction(nodes, edges) {
    const votes = {};
    for (const e of edges) {
      const a = nodes[e.s], b = nodes[e.t];
      if (!a || !b || e.s === e.t || a.group !== b.group) continue;
      const dx = b.at.x - a.at.x, dy = b.at.y - a.at.y;
      if (Math.abs(dx) < 1 && Math.abs(dy) < 1) continue;
      const d = Math.abs(dy) >= Math.abs(dx) ? (dy > 0 ? "TB" : "BT") : (dx > 0 ? "LR" : "RL");
      const key = a.group || "";
      votes[key] = votes[key] || {};
      votes[key][d] = (votes[key][d] || 0) + 1;
    }
    const out = {};
    for (const [g, v] of Object.entries(votes)) out[g] = Object.entries(v).sort((p, q) => q[1] - p[1])[0][0];
    return out;
  }
  // 1 when the drawn path runs through a node that is not one of its ends (its box shrunk by 3 px)
  function crossed(path, nodes, s, t) {
    const length = path.getTotalLength();
    const m = path.getScreenCTM();
    for (const [id, n] of Object.entries(nodes)) {
      if (id === s || id === t) continue;
      for (let at = 0; at <= length; at += 4) {
        const q = path.getPointAtLength(at).matrixTransform(m);
        if (Math.abs(q.x - n.box.x) < n.box.w / 2 - 3 && Math.abs(q.y - n.box.y) < n.box.h / 2 - 3) return 1;
      }
    }
    return 0;
  }
  const paints = (cluster, rect) => { const s = getComputedStyle(rect); cluster.fill = colour(s.fill); cluster.stroke = colour(s.stroke); return cluster; };
  function finish(nodes, edges, clusters, labels) {
    // the innermost cluster holding a node's centre is its group
    for (const n of Object.values(nodes)) {
      const holding = clusters.filter((c) => inside(n.at, c.box)).sort((p, q) => p.box.w * p.box.h - q.box.w * q.box.h);
      n.group = holding.length ? holding[0].id : null;
    }
    const covered = [];
    for (const l of labels) for (const n of Object.values(nodes)) if (overlap(l.box, n.box)) { covered.push(l.text); break; }
    const dirs = direction(nodes, edges);
    for (const n of Object.values(nodes)) { delete n.at; delete n.box; }
    const paint = Object.fromEntries(clusters.map((c) => [c.id, [c.fill, c.stroke]]));
    return { nodes, edges, clusters: clusters.map((c) => c.id).sort(), paint, covered: covered.sort(), direction: dirs };
  }

  async function viaMermaid(text, k, host) {
    const diagram = await mermaid.mermaidAPI.getDiagramFromText(text);
    const data = diagram.db.getData();
    const { svg } = await mermaid.render("fm" + k, text);
    host.innerHTML = svg;
    const root = host.querySelector("svg");
    const prefix = root.id + "-flowchart-";
    const shapes = new Map(data.nodes.map((n) => [n.id, n.shape]));
    const nodes = {};
    // g.icon-shape, g.image-shape: `@{ icon: … }` and `@{ img: … }` nodes
    for (const g of root.querySelectorAll("g.node, g.icon-shape, g.image-shape")) {
      const id = g.id.slice(prefix.length).replace(/-\d+$/, "");
      const shape = [...g.querySelectorAll("rect,path,polygon,circle,ellipse")].find((el) => !el.closest(".label")) || g;
      const s = getComputedStyle(shape);
      const label = g.querySelector(".label") || g;
      const words = label.querySelector(".nodeLabel") || label;
      nodes[id] = { text: squash(label.textContent), shape: shapes.get(id) || "?", fill: colour(s.fill), stroke: colour(s.stroke), ink: colour(getComputedStyle(words).color),
        bold: formatted(label, true), italic: formatted(label, false), at: box(g), box: box(shape) };
    }
    const ends = new Map(data.edges.map((e) => [e.id, e]));
    const edges = [];
    let crossings = 0;
    for (const p of root.querySelectorAll("path.flowchart-link")) {
      const e = ends.get(p.dataset.id);
      const s = getComputedStyle(p);
      if (!e || /invisible/.test(p.getAttribute("class")) || s.strokeWidth === "0px" || s.stroke === "none") continue;
      const lab = root.querySelector(`g.edgeLabel g.label[data-id="${CSS.escape(p.dataset.id)}"]`);
      crossings += crossed(p, nodes, e.start, e.end);
      const words = lab && (lab.querySelector(".edgeLabel") || lab);
      edges.push({ s: e.start, t: e.end, label: squash(lab && lab.textContent), stroke: colour(s.stroke), ink: words && words.textContent.trim() ? colour(getComputedStyle(words).color) : "",
        bold: lab ? formatted(lab, true) : [], italic: lab ? formatted(lab, false) : [],
        ends: [end(p.getAttribute("marker-start")), end(p.getAttribute("marker-end"))] });
    }
    const drawnIds = new Set([...root.querySelectorAll("path.flowchart-link")].map((p) => p.dataset.id));
    const clusterBox = (id) => { const c = root.querySelector(`g.cluster[id="${CSS.escape(root.id + "-" + id)}"] rect`); return c ? box(c) : null; };
    const hidden = data.edges.filter((e) => !drawnIds.has(e.id)).map((e) => way(nodes[e.start] ? nodes[e.start].at : clusterBox(e.start), nodes[e.end] ? nodes[e.end].at : clusterBox(e.end)));
    const clusters = [...root.querySelectorAll("g.cluster")].map((c) => paints({ id: squash((c.querySelector(".cluster-label") || c).textContent), box: box(c.querySelector("rect") || c) }, c.querySelector("rect")));
    const labels = [...root.querySelectorAll("g.edgeLabel")].filter((l) => l.textContent.trim()).map((l) => ({ text: squash(l.textContent), box: box(l.querySelector(".labelBkg") || l) }));
    const facts = finish(nodes, edges, clusters, labels);
    facts.crossings = crossings;
    facts.hidden = hidden;
    facts.title = [diagram.db.getAccTitle(), diagram.db.getAccDescription()];
    return facts;
  }

  function viaMemviz(scene, k, host) {
    const sc = drawing.normalize(scene);
    const drawn = drawing.draw(sc, { collapsed: new Set(), title: "canvas", idPrefix: "fv" + k });
    host.innerHTML = drawn.svg;
    const root = host.querySelector("svg");
    for (const g of root.querySelectorAll("g.node[data-memviz-id]")) g.insertAdjacentHTML("beforeend", drawn.model.labels.get(g.dataset.memvizId));
    drawing.applyCss(root);
    const nodes = {};
    for (const g of root.querySelectorAll("g.node[data-memviz-id]")) {
      const shape = g.querySelector(".shape");
      const s = getComputedStyle(shape);
      const label = g.querySelector(".label");
      nodes[g.dataset.memvizId] = { ink: colour(getComputedStyle(label).fill), text: squash(label.textContent), shape: g.dataset.shape || (sc.nodes.find((n) => n.id === g.dataset.memvizId) || {}).shape, fill: colour(s.fill), stroke: colour(s.stroke),
        bold: formatted(label, true), italic: formatted(label, false), at: box(g), box: box(shape) };
    }
    const edges = [];
    const seen = new Set();
    let crossings = 0;
    for (const p of root.querySelectorAll("path.edge")) {
      const k2 = +p.dataset.edge;
      if (seen.has(k2)) continue; // a dotted edge is drawn in pieces
      seen.add(k2);
      const e = sc.edges[k2];
      const s = getComputedStyle(p);
      const pieces = [...root.querySelectorAll(`path.edge[data-edge="${k2}"]`)];
      const last = pieces[pieces.length - 1];
      crossings += Math.max(0, ...pieces.map((piece) => crossed(piece, nodes, e.s, e.t)));
      const text = root.querySelector(`g.edge-label[data-edge="${k2}"] text`);
      edges.push({ s: e.s, t: e.t, label: squash(e.label), stroke: colour(s.stroke), ink: text ? colour(getComputedStyle(text).fill) : "",
        bold: text ? formatted(text, true) : [], italic: text ? formatted(text, false) : [],
        ends: [end(p.getAttribute("marker-start")), end(last.getAttribute("marker-end"))] });
    }
    const groupBox = (id) => { const c = root.querySelector(`g.cluster[data-group="${CSS.escape(id)}"] rect`); return c ? box(c) : null; };
    const hidden = sc.edges.filter((e) => e.kind === "invisible").map((e) => way(nodes[e.s] ? nodes[e.s].at : groupBox(e.s), nodes[e.t] ? nodes[e.t].at : groupBox(e.t)));
    const titles = new Map(sc.groups.map((g) => [g.id, g.title || g.id]));
    const clusters = [...root.querySelectorAll("g.cluster[data-group]")].map((c) => paints({ id: squash(titles.get(c.dataset.group)), box: box(c.querySelector("rect")) }, c.querySelector("rect")));
    const labels = [...root.querySelectorAll("g.edge-label")].map((l) => ({ text: squash(l.textContent), box: box(l.querySelector("rect")) }));
    const facts = finish(nodes, edges, clusters, labels);
    facts.crossings = crossings;
    facts.hidden = hidden;
    const desc = root.querySelector("desc");
    facts.title = [root.querySelector("title").textContent, desc ? desc.textContent : ""];
    return facts;
  }

  const out = [];
  const host = document.getElementById("drawing");
  for (let k = 0; k < items.length; k++) {
    const item = items[k];
    let m, v;
    try { m = await viaMermaid(item.text, k, host); } catch (error) { m = { error: String(error && error.message || error).slice(0, 200) }; }
    try { v = viaMemviz(item.scene, k, host); } catch (error) { v = { error: String(error && error.stack || error).slice(0, 400) }; }
    out.push({ mermaid: m, memviz: v });
  }
  return out;
}
