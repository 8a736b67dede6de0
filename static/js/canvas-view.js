// The map around a drawn canvas: pan and zoom (svg-pan-zoom), level of detail (far away only
// boxes are painted, labels from a readable size on), the minimap, and moving the view to nodes.
// memvizView.attach(svgElement, model, minimapHost) -> view
(function () {
  "use strict";
  const READABLE_PX = 11; // smallest on-screen label size the default view accepts
  const LABELS_FROM_PX = 6; // below this labels are not painted at all (boxes only)
  const MAX_FIT = 1.2;
  const LABEL_ALL_UP_TO = 150; // smaller drawings get every label at once
  const MOTION_IDLE_MS = 180;

  function attach(svg, model, minimapHost) {
    const fontSize = memvizDraw.FONT_SIZE;
    const listeners = [];
    let frame = 0;
    const host = svg.parentElement;
    const pz = svgPanZoom(svg, {
      viewportSelector: ".mc-content", zoomEnabled: true, controlIconsEnabled: false, fit: false, center: false,
      minZoom: 0.01, maxZoom: 8, zoomScaleSensitivity: 0.25, dblClickZoomEnabled: false,
      onZoom: changed, onPan: changed,
    });
    let destroyed = false;
    // While the view moves, edges lose their dashes and arrowheads and shapes their
    // anti-aliasing: on 1000 nodes dashed, marked edges were most of a frame (measured 2-4x).
    let idle = 0;
    function moving() {
      svg.classList.add("moving");
      clearTimeout(idle);
      idle = setTimeout(() => svg.classList.remove("moving"), MOTION_IDLE_MS);
    }
    let quiet = false; // a view set by the page (default view, focus), not a user's gesture
    function changed() {
      if (!destroyed && !quiet) moving();
      if (frame || destroyed) return;
      frame = requestAnimationFrame(() => { frame = 0; if (destroyed) return; lod(); labels(); drawViewBox(); listeners.forEach((f) => f()); });
    }
    // Labels are put in only for nodes on (or near) the screen: a 1000-node drawing with every
    // label in the DOM spent most of its first paint laying out text nobody could see.
    const labelled = new Set();
    const nodeEls = new Map([...svg.querySelectorAll("g.node")].map((g) => [g.dataset.memvizId, g]));
    function labels() {
      if (scale() * fontSize < LABELS_FROM_PX || labelled.size === nodeEls.size) return;
      const r = visibleRect();
      const everywhere = nodeEls.size <= LABEL_ALL_UP_TO;
      const mx = r.w / 2, my = r.h / 2;
      for (const [id, g] of nodeEls) {
        if (labelled.has(id)) continue;
        const b = model.boxes.get(id);
        if (!everywhere && (b.x + b.w / 2 < r.x - mx || b.x - b.w / 2 > r.x + r.w + mx || b.y + b.h / 2 < r.y - my || b.y - b.h / 2 > r.y + r.h + my)) continue;
        g.insertAdjacentHTML("beforeend", model.labels.get(id));
        memvizDraw.applyCss(g);
        labelled.add(id);
      }
    }
    function scale() { return pz.getSizes().realZoom; }
    function lod() {
      const px = scale() * fontSize;
      svg.classList.toggle("lod-far", px < LABELS_FROM_PX);
    }
    function viewport() { const r = host.getBoundingClientRect(); return { w: r.width || 800, h: r.height || 500 }; }
    // the part of the drawing on screen, in drawing coordinates
    function visibleRect() {
      const k = scale(), p = pz.getPan(), v = viewport();
      return { x: -p.x / k, y: -p.y / k, w: v.w / k, h: v.h / k };
    }
    function setView(k, cx, cy, gesture) {
      const v = viewport();
      quiet = !gesture;
      pz.zoom(k);
      pz.pan({ x: v.w / 2 - cx * k, y: v.h / 2 - cy * k });
      quiet = false;
      lod(); labels(); drawViewBox();
    }
    // Fit a box with labels at least READABLE_PX tall; if it cannot fit, centre `centre` instead.
    function showBox(box, centre) {
      const v = viewport(), pad = 40;
      const fit = Math.min((v.w - pad) / Math.max(box.w, 1), (v.h - pad) / Math.max(box.h, 1), MAX_FIT);
      const readable = READABLE_PX / fontSize;
      if (fit >= readable) setView(fit, box.x + box.w / 2, box.y + box.h / 2);
      else { const c = centre || { x: box.x + box.w / 2, y: box.y + box.h / 2 }; setView(readable, c.x, c.y); }
    }
    function fitAll() {
      svgResize();
      const v = viewport(), pad = 20;
      const k = Math.min((v.w - pad) / Math.max(model.width, 1), (v.h - pad) / Math.max(model.height, 1), MAX_FIT);
      setView(k, model.width / 2, model.height / 2);
    }
    function focusNode(id) {
      const b = model.boxes.get(id);
      if (!b) return false;
      const k = Math.max(scale(), READABLE_PX / fontSize * 1.3);
      setView(Math.min(k, 2), b.x, b.y);
      return true;
    }
    function svgResize() { try { pz.resize(); } catch (e) { /* detached */ } }

    // ---- minimap --------------------------------------------------------------------------
    let mini = null, miniView = null;
    function buildMinimap() {
      if (!minimapHost) return;
      const W = model.width || 1, H = model.height || 1;
      const parts = [];
      for (const b of model.blocks.values()) {
        const box = model.boxes.get(b.id);
        if (box && b.group) parts.push(`<rect class="mm-group" x="${box.x - box.w / 2}" y="${box.y - box.h / 2}" width="${box.w}" height="${box.h}"/>`);
      }
      for (const [id, leaf] of model.leaves) {
        const box = model.boxes.get(id);
        if (box) parts.push(`<rect class="mm-node mvz_${leaf.key}" x="${box.x - box.w / 2}" y="${box.y - box.h / 2}" width="${box.w}" height="${box.h}"/>`);
      }
      const stroke = Math.max(W, H) / 100;
      minimapHost.innerHTML = `<svg viewBox="${-stroke} ${-stroke} ${W + 2 * stroke} ${H + 2 * stroke}" preserveAspectRatio="xMidYMid meet" aria-hidden="true">${parts.join("")}<rect class="mm-view"/></svg>`;
      mini = minimapHost.querySelector("svg");
      miniView = minimapHost.querySelector(".mm-view");
      miniView.style.strokeWidth = stroke;
      minimapHost.hidden = false;
      let dragging = false;
      const jump = (ev) => {
        const pt = mini.createSVGPoint();
        pt.x = ev.clientX; pt.y = ev.clientY;
        const p = pt.matrixTransform(mini.getScreenCTM().inverse());
        setView(scale(), p.x, p.y, true);
        listeners.forEach((f) => f());
      };
      mini.addEventListener("pointerdown", (ev) => { dragging = true; mini.setPointerCapture(ev.pointerId); jump(ev); });
      mini.addEventListener("pointermove", (ev) => { if (dragging) jump(ev); });
      mini.addEventListener("pointerup", () => { dragging = false; });
      drawViewBox();
    }
    function drawViewBox() {
      if (!miniView) return;
      const r = visibleRect();
      // only worth its corner while part of the drawing is off screen
      minimapHost.hidden = r.x <= 0 && r.y <= 0 && r.x + r.w >= model.width && r.y + r.h >= model.height;
      miniView.setAttribute("x", r.x); miniView.setAttribute("y", r.y);
      miniView.setAttribute("width", Math.max(r.w, 0)); miniView.setAttribute("height", Math.max(r.h, 0));
    }
    buildMinimap();
    lod();

    return {
      panZoom: pz, scale, visibleRect, setView, showBox, fitAll, focusNode, resize: svgResize,
      onChange: (f) => listeners.push(f),
      zoomIn: () => pz.zoomIn(), zoomOut: () => pz.zoomOut(),
      state: () => ({ k: scale(), pan: pz.getPan() }),
      restore: (s) => { quiet = true; pz.zoom(s.k); pz.pan(s.pan); quiet = false; lod(); labels(); drawViewBox(); },
      // what a wheel or drag step does (the benchmark's zoom goes through here)
      gestureTo: (k, cx, cy) => setView(k, cx, cy, true),
      labelAll: () => { for (const [id, g] of nodeEls) if (!labelled.has(id)) { g.insertAdjacentHTML("beforeend", model.labels.get(id)); memvizDraw.applyCss(g); labelled.add(id); } },
      destroy: () => { destroyed = true; cancelAnimationFrame(frame); try { pz.destroy(); } catch (e) { /* gone */ } if (minimapHost) minimapHost.innerHTML = ""; },
      READABLE_PX,
    };
  }

  window.memvizView = { attach, READABLE_PX };
})();
