// Renders the canvas with mermaid.js, adds pan/zoom, opens the node panel on click, and drives
// the editing UI: node selection, the op forms (htmx), keyboard shortcuts, revision diagrams.
(function () {
  "use strict";
  mermaid.initialize({
    startOnLoad: false,
    securityLevel: "strict",
    maxTextSize: 2000000,
    maxEdges: 20000,
    flowchart: { htmlLabels: true, useMaxWidth: false },
  });

  let renderCount = 0;
  let panZoom = null;
  let savedView = null;
  // Selection order matters: merge keeps the first, an edge goes from the first to the second.
  let selection = [];

  function nodeIdOf(el, known) {
    if (el.dataset && el.dataset.id && known.has(el.dataset.id)) return el.dataset.id;
    // mermaid ids look like "<render id>-flowchart-<nodeId>-<n>" (older: "flowchart-<nodeId>-<n>")
    const m = /(?:^|-)flowchart-(.+)-\d+$/.exec(el.id || "");
    if (m && known.has(m[1])) return m[1];
    return null;
  }

  function knownNodes() {
    return new Set([...document.querySelectorAll(".node-list li[data-node]")].map((li) => li.dataset.node));
  }

  function showSelection() {
    const known = knownNodes();
    selection = selection.filter((id) => known.has(id));
    document.querySelectorAll(".mermaid-host g.node.selected").forEach((g) => g.classList.remove("selected"));
    document.querySelectorAll(".node-list li.selected").forEach((li) => li.classList.remove("selected"));
    document.querySelectorAll("#diagram g.node").forEach((g) => {
      if (selection.includes(g.dataset.memvizId)) g.classList.add("selected");
    });
    document.querySelectorAll(".node-list li[data-node]").forEach((li) => {
      const on = selection.includes(li.dataset.node);
      li.classList.toggle("selected", on);
      const box = li.querySelector("input.node-select");
      if (box) box.checked = on;
    });
    const list = document.getElementById("selection-list");
    if (list) list.textContent = selection.length ? selection.join(", ") : "none";
    document.body.dataset.selection = selection.join(",");
  }

  function toggleSelected(id) {
    if (selection.includes(id)) selection = selection.filter((x) => x !== id);
    else selection.push(id);
    showSelection();
  }

  function openNode(diagram, id) {
    const url = diagram.dataset.nodeUrl.replace("__NODE__", encodeURIComponent(id));
    htmx.ajax("GET", url, { target: "#node-panel", swap: "innerHTML" });
    selection = [id];
    showSelection();
    history.replaceState(null, "", "#node=" + encodeURIComponent(id));
  }

  function toggleGroup(diagram, groupId) {
    const collapsed = new Set((diagram.dataset.collapsed || "").split(",").filter(Boolean));
    if (collapsed.has(groupId)) collapsed.delete(groupId); else collapsed.add(groupId);
    const url = diagram.dataset.canvasUrl + "?collapsed=" + encodeURIComponent([...collapsed].join(","));
    htmx.ajax("GET", url, { target: "#diagram", swap: "outerHTML" });
  }

  async function render() {
    const diagram = document.getElementById("diagram");
    if (!diagram) return;
    const host = diagram.querySelector(".mermaid-host");
    const errorBox = diagram.querySelector(".render-error");
    const body = JSON.parse(document.getElementById("render-body").textContent);
    const nodeIds = knownNodes();
    const groups = new Set((diagram.dataset.collapsed || "").split(",").filter(Boolean));
    document.body.dataset.canvasRendered = "pending";
    try {
      const { svg, bindFunctions } = await mermaid.render("memviz-canvas-" + (++renderCount), body);
      host.innerHTML = svg;
      if (bindFunctions) bindFunctions(host);
    } catch (err) {
      host.innerHTML = "";
      errorBox.hidden = false;
      errorBox.textContent = "mermaid could not render this canvas: " + (err && err.message ? err.message : err) +
        " — the node list beside it is still complete.";
      document.body.dataset.canvasRendered = "error";
      return;
    }
    const svgEl = host.querySelector("svg");
    svgEl.removeAttribute("style");
    svgEl.setAttribute("width", "100%");
    svgEl.setAttribute("height", "100%");
    svgEl.querySelectorAll("g.node").forEach((g) => {
      const id = nodeIdOf(g, new Set([...nodeIds, ...groups]));
      if (!id) return;
      g.dataset.memvizId = id;
      g.style.cursor = "pointer";
      if (groups.has(id)) g.classList.add("collapsed-group");
    });
    svgEl.addEventListener("click", (ev) => {
      const g = ev.target.closest("g.node");
      if (!g || !g.dataset.memvizId) return;
      if (g.classList.contains("collapsed-group")) toggleGroup(diagram, g.dataset.memvizId);
      else if (ev.shiftKey || ev.ctrlKey || ev.metaKey) toggleSelected(g.dataset.memvizId);
      else openNode(diagram, g.dataset.memvizId);
    });
    // Clicking a subgraph title collapses it.
    svgEl.querySelectorAll("g.cluster").forEach((c) => {
      const id = (c.id || "").replace(/^.*?subGraph\d*-?/, "") || c.id;
      const allGroups = (diagram.dataset.subgraphs || "").split(",");
      const match = allGroups.find((gid) => c.id === gid || c.id.endsWith(gid) || id === gid);
      if (!match) return;
      const label = c.querySelector(".cluster-label");
      if (label) {
        label.style.cursor = "pointer";
        label.setAttribute("title", "collapse this group");
        label.addEventListener("click", () => toggleGroup(diagram, match));
      }
    });
    if (panZoom) { try { savedView = savedView || { zoom: panZoom.getZoom(), pan: panZoom.getPan() }; panZoom.destroy(); } catch (e) { /* gone */ } }
    panZoom = svgPanZoom(svgEl, { zoomEnabled: true, controlIconsEnabled: false, fit: true, center: true, minZoom: 0.05, maxZoom: 40, dblClickZoomEnabled: false });
    if (savedView && diagram.dataset.keepView === "1") { panZoom.zoom(savedView.zoom); panZoom.pan(savedView.pan); }
    else capFitZoom();
    savedView = null;
    showSelection();
    document.body.dataset.canvasRendered = "ok";
    document.body.dataset.renderCount = String(renderCount);
    const m = /#node=(.+)$/.exec(location.hash);
    if (m && !document.querySelector("#node-panel .node-detail") && !selection.length) openNode(diagram, decodeURIComponent(m[1]));
  }

  // "Fit" blows a three-node canvas up to fill the box; never fit beyond 1.2x real size.
  const MAX_FIT_SCALE = 1.2;
  function capFitZoom() {
    const real = panZoom.getSizes().realZoom;
    if (real > MAX_FIT_SCALE) { panZoom.zoom(panZoom.getZoom() * MAX_FIT_SCALE / real); panZoom.center(); }
  }

  const DIFF_COLOURS = { added: "#2da44e", changed: "#d4a72c", removed: "#cf222e" };

  // Revision pages: before/after diagrams with added, changed and removed nodes coloured.
  async function renderStatic(box) {
    const script = box.querySelector("script[type='application/json']");
    const host = box.querySelector(".mermaid-host");
    if (!script || !host) return;
    try {
      const { svg } = await mermaid.render("memviz-static-" + (++renderCount), JSON.parse(script.textContent));
      host.innerHTML = svg;
    } catch (err) {
      host.textContent = "mermaid could not render this version: " + (err && err.message ? err.message : err);
      return;
    }
    const lists = {};
    for (const kind of ["added", "changed", "removed"]) lists[kind] = new Set((box.dataset[kind] || "").split(",").filter(Boolean));
    const all = new Set([...lists.added, ...lists.changed, ...lists.removed]);
    host.querySelectorAll("g.node").forEach((g) => {
      const id = nodeIdOf(g, all);
      if (!id) return;
      for (const kind of ["added", "changed", "removed"]) {
        if (!lists[kind].has(id)) continue;
        g.classList.add("diff-" + kind);
        // mermaid writes status colours as inline !important styles: override them inline too.
        g.querySelectorAll("rect, polygon, path, circle").forEach((shape) => {
          shape.style.setProperty("stroke", DIFF_COLOURS[kind], "important");
          shape.style.setProperty("stroke-width", "5px", "important");
        });
      }
    });
    box.dataset.rendered = "ok";
  }

  // ---- editing --------------------------------------------------------------------------
  function editor() { return document.getElementById("editor"); }

  function openForm(name) {
    const ed = editor();
    if (!ed) return;
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
    const diagram = document.getElementById("diagram");
    if (diagram && !has("collapsed")) set("collapsed", diagram.dataset.collapsed || "");
  });

  htmx.on("htmx:beforeSwap", (ev) => {
    const target = ev.detail.target;
    if (target && (target.id === "editor" || target.id === "diagram")) document.body.dataset.canvasRendered = "pending";
    // Keep the pan/zoom of the diagram across an edit's re-render.
    if (panZoom && target && target.id === "editor") {
      try { savedView = { zoom: panZoom.getZoom(), pan: panZoom.getPan() }; } catch (e) { savedView = null; }
    }
  });

  document.addEventListener("click", (ev) => {
    const opener = ev.target.closest("[data-open]");
    if (opener) { openForm(opener.dataset.open); return; }
    if (ev.target.closest("[data-close]")) { closeForms(); return; }
    if (ev.target.closest("[data-help]")) { const d = document.getElementById("shortcut-help"); if (d) d.showModal(); return; }
    const box = ev.target.closest("input.node-select");
    if (box) { toggleSelected(box.value); return; }
    const button = ev.target.closest("[data-zoom]");
    if (!button || !panZoom) return;
    const action = button.dataset.zoom;
    if (action === "in") panZoom.zoomIn(); else if (action === "out") panZoom.zoomOut(); else { panZoom.resize(); panZoom.fit(); panZoom.center(); capFitZoom(); }
  });
  document.addEventListener("click", (ev) => {
    // shift-click in the node list selects instead of opening the panel
    const link = ev.target.closest(".node-list a.node-link");
    if (link && (ev.shiftKey || ev.ctrlKey || ev.metaKey)) {
      ev.preventDefault();
      ev.stopPropagation();
      toggleSelected(link.closest("li").dataset.node);
    }
  }, true);

  const SHORTCUTS = { m: "merge", a: "annotate", s: "status", e: "edit", g: "edge", t: "meta", Delete: "prune" };
  document.addEventListener("keydown", (ev) => {
    const typing = ev.target.closest("textarea, select, input:not([type=checkbox]):not([type=radio]):not([type=submit]):not([type=button])");
    if (typing) {
      if (ev.key === "Escape") { closeForms(); ev.target.blur(); }
      return;
    }
    if (ev.ctrlKey || ev.metaKey || ev.altKey) return;
    if (document.querySelector("dialog[open]")) return;  // Escape closes the help, nothing else
    const editing = !!document.querySelector(".edit-toolbar");
    if (editing && SHORTCUTS[ev.key]) { ev.preventDefault(); openForm(SHORTCUTS[ev.key]); return; }
    if (editing && ev.key === "z") { submitHidden("undo"); return; }
    if (editing && ev.key === "Z") { submitHidden("redo"); return; }
    if (ev.key === "Escape") { selection = []; showSelection(); closeForms(); return; }
    if (ev.key === "?") { const d = document.getElementById("shortcut-help"); if (d) d.showModal(); return; }
    if (!panZoom) return;
    if (ev.key === "+" || ev.key === "=") panZoom.zoomIn();
    else if (ev.key === "-") panZoom.zoomOut();
    else if (ev.key === "0") { panZoom.resize(); panZoom.fit(); panZoom.center(); capFitZoom(); }
  });

  function staleCheck() {
    const live = document.getElementById("live");
    const ed = editor();
    if (!live || !ed) return;
    const note = live.querySelector(".stale-note");
    if (note) note.hidden = live.dataset.hash === ed.dataset.hash;
  }

  htmx.onLoad((elt) => {
    if (elt.id === "diagram" || elt.id === "editor") render();
    if (elt.id === "editor") { const live = document.getElementById("live"); if (live) live.dataset.hash = elt.dataset.hash; }
    if (elt.id === "live" || elt.id === "editor") staleCheck();
  });
  window.memvizCanvas = { render, selection: () => [...selection], select: (ids) => { selection = [...ids]; showSelection(); } };
  function start() {
    render();
    document.querySelectorAll(".static-diagram").forEach(renderStatic);
  }
  if (document.readyState === "loading") document.addEventListener("DOMContentLoaded", start); else start();
})();
