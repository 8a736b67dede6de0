// The map around a drawn canvas: pan and zoom (svg-pan-zoom moves a composited layer while the
// view moves, see settle()), level of detail (far away only
// boxes are painted, labels from a readable size on), the minimap, and moving the view to nodes.
// attach(svgElement, model, minimapHost) -> view. svg-pan-zoom is the vendored library's global.
import { applyCss, FONT_SIZE } from "./canvas-draw.js";
import { handler as touchHandler } from "./canvas-touch.js";

const READABLE_PX = 11; // smallest on-screen label size the default view accepts
const WHOLE_PX = 8; // a small canvas that fits with labels this size opens whole (a 6-node chain is tall)
const LABELS_FROM_PX = 6; // below this labels are not painted at all (boxes only)
const MAX_FIT = 1.2;
const MIN_ZOOM = 0.01, MAX_ZOOM = 8;
const LABEL_ALL_UP_TO = 150; // smaller drawings get every label at once
const MOTION_IDLE_MS = 180;
const SVG_NS = "http://www.w3.org/2000/svg";
const MARK_PAD = 5; // drawing units between a node's box and its selection ring

function attach(svg, model, minimapHost) {
  const fontSize = FONT_SIZE;
  const listeners = [];
  let frame = 0;
  const host = svg.parentElement;
  // svg-pan-zoom keeps the view (wheel, drag, zoom limits) on an empty group; paint() puts it
  // on the drawing, as a CSS transform of the whole <svg> while the view moves.
  const content = svg.querySelector(".mc-content");
  const state = svg.appendChild(document.createElementNS(SVG_NS, "g"));
  state.setAttribute("class", "mc-view-state");
  // The <svg> box never moves for svg-pan-zoom's pointer maths, whatever CSS transform it has.
  svg.getScreenCTM = () => { const r = host.getBoundingClientRect(); return svg.createSVGMatrix().translate(r.left, r.top); };
  const pz = svgPanZoom(svg, {
    viewportSelector: ".mc-view-state", zoomEnabled: true, controlIconsEnabled: false, fit: false, center: false,
    minZoom: MIN_ZOOM, maxZoom: MAX_ZOOM, zoomScaleSensitivity: 0.25, dblClickZoomEnabled: false,
    onZoom: changed, onPan: changed, onUpdatedCTM: paint,
    customEventsHandler: touchHandler(), // a tap clicks (canvas-touch.js)
  });
  let painted = null; // the view the SVG content was last painted at
  function paint() {
    const k = pz.getSizes().realZoom, p = pz.getPan();
    if (idle && painted) {
      // moving: the picture painted at `painted`, scaled and shifted to the view as it is now
      const s = k / painted.k;
      svg.style.transform = marks.style.transform = `matrix(${s},0,0,${s},${p.x - painted.x * s},${p.y - painted.y * s})`;
      return;
    }
    const at = `matrix(${k},0,0,${k},${p.x},${p.y})`;
    content.setAttribute("transform", at);
    marked.setAttribute("transform", at);
    svg.style.transform = marks.style.transform = "";
    painted = { k, x: p.x, y: p.y };
  }
  let destroyed = false;
  // The drawing is a composited layer of its own (will-change in memviz.css): a change elsewhere
  // on the page (the node panel) does not re-raster it. While the view moves, paint() gives the
  // layer a CSS transform: each frame only moves that layer's picture instead of
  // repainting every node, edge and label (on 1000 nodes 25-50 ms of every frame). Edges lose their dashes and
  // arrowheads meanwhile, so the tiles that come into view raster fast. No label is added
  // and no level of detail changes while moving (either would repaint the layer); when the
  // view rests, the layer goes and the SVG is painted crisp at its new scale.
  let idle = 0;
  function settle() {
    idle = 0;
    if (destroyed) return;
    svg.classList.remove("moving");
    paint();
    lod(); labels();
  }
  function moving() {
    svg.classList.add("moving");
    clearTimeout(idle);
    idle = setTimeout(settle, MOTION_IDLE_MS);
  }
  let quiet = false; // a view set by the page (default view, focus), not a user's gesture
  function changed() {
    if (!destroyed && !quiet) moving();
    if (frame || destroyed) return;
    frame = requestAnimationFrame(() => {
      frame = 0;
      if (destroyed) return;
      if (!idle) { lod(); labels(); }
      drawViewBox();
      listeners.forEach((f) => f());
    });
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
      applyCss(g);
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
  // pz.zoom(z) is relative to the zoom svg-pan-zoom last took as its "original", and
  // pz.resize() (each Fit) takes the current zoom as that: asked for k, Fit got k × the zoom
  // it started from (0.79 → 0.62 → 0.49). This sets the real zoom k whatever that base is.
  function zoomTo(k) { const real = pz.getSizes().realZoom; pz.zoom(real > 0 ? (k * pz.getZoom()) / real : k); }
  function setView(k, cx, cy, gesture) {
    const v = viewport();
    quiet = !gesture;
    zoomTo(k);
    pz.pan({ x: v.w / 2 - cx * k, y: v.h / 2 - cy * k });
    quiet = false;
    if (!idle) { lod(); labels(); }
    drawViewBox();
  }
  // Fit a box with labels at least READABLE_PX tall; if it cannot fit, centre `centre` instead.
  function showBox(box, centre) {
    const v = viewport(), pad = 40;
    const fit = Math.min((v.w - pad) / Math.max(box.w, 1), (v.h - pad) / Math.max(box.h, 1), MAX_FIT);
    const readable = READABLE_PX / fontSize;
    if (fit >= readable) setView(fit, box.x + box.w / 2, box.y + box.h / 2);
    else { const c = centre || { x: box.x + box.w / 2, y: box.y + box.h / 2 }; setView(readable, c.x, c.y); }
  }
  // the zoom at which the whole drawing fits the box
  function fitScale() {
    const v = viewport(), pad = 20;
    return Math.min((v.w - pad) / Math.max(model.width, 1), (v.h - pad) / Math.max(model.height, 1), MAX_FIT);
  }
  function fitAll() {
    svgResize();
    setView(fitScale(), model.width / 2, model.height / 2);
  }
  function focusNode(id) {
    const b = model.boxes.get(id);
    if (!b) return false;
    const k = Math.max(scale(), READABLE_PX / fontSize * 1.3);
    setView(Math.min(k, 2), b.x, b.y);
    return true;
  }
  // resize() also rescales the zoom limits by its new base: after a Fit of 1000 expanded nodes
  // (0.02) nothing could be zoomed past 0.16, so going to a node landed far from it.
  function svgResize() {
    try { pz.resize(); } catch (e) { return; /* detached */ }
    const base = pz.getSizes().realZoom / pz.getZoom();
    if (base > 0) pz.setMinZoom(MIN_ZOOM / base).setMaxZoom(MAX_ZOOM / base);
  }

  // ---- minimap --------------------------------------------------------------------------
  let mini = null, miniView = null, miniBox = null;
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
    // The view's rectangle is a box the compositor moves (a CSS transform): changing anything
    // painted would repaint the page's display list on every frame of a pan or zoom.
    minimapHost.innerHTML = `<svg viewBox="${-stroke} ${-stroke} ${W + 2 * stroke} ${H + 2 * stroke}" preserveAspectRatio="xMidYMid meet" aria-hidden="true">${parts.join("")}</svg><div class="mm-view"></div>`;
    mini = minimapHost.querySelector("svg");
    miniView = minimapHost.querySelector(".mm-view");
    miniBox = { x: -stroke, y: -stroke, w: W + 2 * stroke, h: H + 2 * stroke };
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
    const whole = r.x <= 0 && r.y <= 0 && r.x + r.w >= model.width && r.y + r.h >= model.height;
    if (minimapHost.hidden !== whole) minimapHost.hidden = whole;
    // the map's viewBox, fitted ("meet") into the minimap's box
    const mw = minimapHost.clientWidth, mh = minimapHost.clientHeight;
    const m = Math.min(mw / miniBox.w, mh / miniBox.h);
    const ox = (mw - miniBox.w * m) / 2, oy = (mh - miniBox.h * m) / 2;
    const w = Math.max(r.w * m, 4), h = Math.max(r.h * m, 4); // never too small to see
    const x = ox + (r.x - miniBox.x) * m + (r.w * m - w) / 2, y = oy + (r.y - miniBox.y) * m + (r.h * m - h) / 2;
    miniView.style.transform = `translate(${x}px,${y}px) scale(${w / 100},${h / 100})`;
  }
  // The selection is drawn on a layer of its own above the drawing, moved with it: marking a
  // node inside a 1000-node SVG had the whole drawing re-rastered on every click (100-250 ms
  // of raster work in a trace), and the frame with the node's panel waited behind it.
  const marks = document.createElementNS(SVG_NS, "svg");
  marks.setAttribute("class", "mc-marks");
  marks.setAttribute("aria-hidden", "true");
  const marked = marks.appendChild(document.createElementNS(SVG_NS, "g"));
  function mark(ids) {
    const rings = [];
    for (const id of ids) {
      const b = model.boxes.get(id);
      if (b) rings.push(`<rect x="${b.x - b.w / 2 - MARK_PAD}" y="${b.y - b.h / 2 - MARK_PAD}" width="${b.w + 2 * MARK_PAD}" height="${b.h + 2 * MARK_PAD}" rx="${MARK_PAD + 3}"/>`);
    }
    marked.innerHTML = rings.join("");
  }
  host.insertAdjacentElement("afterend", marks);
  buildMinimap();
  paint();
  lod();

  return {
    panZoom: pz, scale, visibleRect, setView, showBox, fitScale, fitAll, focusNode, mark, resize: svgResize,
    onChange: (f) => listeners.push(f),
    zoomIn: () => pz.zoomIn(), zoomOut: () => pz.zoomOut(),
    state: () => ({ k: scale(), pan: pz.getPan() }),
    restore: (s) => { quiet = true; zoomTo(s.k); pz.pan(s.pan); quiet = false; lod(); labels(); drawViewBox(); },
    // what a wheel or drag step does (the benchmark's zoom goes through here)
    gestureTo: (k, cx, cy) => setView(k, cx, cy, true),
    labelAll: () => { for (const [id, g] of nodeEls) if (!labelled.has(id)) { g.insertAdjacentHTML("beforeend", model.labels.get(id)); applyCss(g); labelled.add(id); } },
    destroy: () => { destroyed = true; cancelAnimationFrame(frame); clearTimeout(idle); try { pz.destroy(); } catch (e) { /* gone */ } marks.remove(); if (minimapHost) minimapHost.innerHTML = ""; },
    READABLE_PX, WHOLE_PX,
  };
}

export { attach, READABLE_PX };
