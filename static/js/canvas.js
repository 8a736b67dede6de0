// Renders the canvas with mermaid.js, adds pan/zoom, and opens the node panel on click.
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

  function nodeIdOf(el, known) {
    if (el.dataset && el.dataset.id && known.has(el.dataset.id)) return el.dataset.id;
    // mermaid ids look like "<render id>-flowchart-<nodeId>-<n>"
    const m = /^.*?flowchart-(.+)-\d+$/.exec(el.id || "");
    if (m && known.has(m[1])) return m[1];
    return null;
  }

  function openNode(diagram, id) {
    const url = diagram.dataset.nodeUrl.replace("__NODE__", encodeURIComponent(id));
    htmx.ajax("GET", url, { target: "#node-panel", swap: "innerHTML" });
    document.querySelectorAll(".mermaid-host g.node.selected").forEach((g) => g.classList.remove("selected"));
    document.querySelectorAll(".node-list li.selected").forEach((li) => li.classList.remove("selected"));
    diagram.querySelectorAll("g.node").forEach((g) => {
      if (g.dataset.memvizId === id) g.classList.add("selected");
    });
    const li = document.querySelector(`.node-list li[data-node="${CSS.escape(id)}"]`);
    if (li) li.classList.add("selected");
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
    const nodeIds = new Set([...document.querySelectorAll(".node-list li[data-node]")].map((li) => li.dataset.node));
    const groups = new Set((diagram.dataset.collapsed || "").split(",").filter(Boolean));
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
    if (panZoom) { try { savedView = { zoom: panZoom.getZoom(), pan: panZoom.getPan() }; panZoom.destroy(); } catch (e) { /* gone */ } }
    panZoom = svgPanZoom(svgEl, { zoomEnabled: true, controlIconsEnabled: false, fit: true, center: true, minZoom: 0.05, maxZoom: 40, dblClickZoomEnabled: false });
    if (savedView && diagram.dataset.keepView === "1") { panZoom.zoom(savedView.zoom); panZoom.pan(savedView.pan); }
    document.body.dataset.canvasRendered = "ok";
    const m = /#node=(.+)$/.exec(location.hash);
    if (m && !document.querySelector("#node-panel .node-detail")) openNode(diagram, decodeURIComponent(m[1]));
  }

  document.addEventListener("click", (ev) => {
    const button = ev.target.closest("[data-zoom]");
    if (!button || !panZoom) return;
    const action = button.dataset.zoom;
    if (action === "in") panZoom.zoomIn(); else if (action === "out") panZoom.zoomOut(); else { panZoom.resize(); panZoom.fit(); panZoom.center(); }
  });
  document.addEventListener("keydown", (ev) => {
    if (ev.target.closest("input, textarea, select") || !panZoom) return;
    if (ev.key === "+" || ev.key === "=") panZoom.zoomIn();
    else if (ev.key === "-") panZoom.zoomOut();
    else if (ev.key === "0") { panZoom.resize(); panZoom.fit(); panZoom.center(); }
  });
  htmx.onLoad((elt) => { if (elt.id === "diagram") render(); });
  window.memvizCanvas = { render };
  if (document.readyState === "loading") document.addEventListener("DOMContentLoaded", render); else render();
})();
