// Touch on the drawing: one finger pans, two pinch-zoom, a tap is a click. svg-pan-zoom's own
// touch handling calls preventDefault() on touchstart, and a touch whose start is cancelled is
// never followed by a click, so on a phone a tap on a node opened nothing. Its touch listeners
// are halted here and the gestures are read from pointer events instead (the drawing has
// `touch-action: none`, memviz.css, so the page does not scroll or zoom under the finger).
// handler() -> a svg-pan-zoom customEventsHandler
function handler() {
  let svg = null, pz = null;
  const points = new Map(); // pointerId -> {x, y}, touches on the drawing
  let start = null; // the gesture's first state: zoom, pan, the fingers' centre and spread

  // the fingers' centre in the drawing box's coordinates (its <svg> may carry a CSS transform)
  function centre() {
    const r = svg.parentElement.getBoundingClientRect();
    let x = 0, y = 0;
    for (const p of points.values()) { x += p.x; y += p.y; }
    return { x: x / points.size - r.left, y: y / points.size - r.top };
  }
  function spread() {
    const [a, b] = [...points.values()];
    return b ? Math.hypot(a.x - b.x, a.y - b.y) : 0;
  }
  // a finger more or fewer: the gesture goes on from where the view is now
  function begin() {
    start = points.size ? { k: pz.getSizes().realZoom, zoom: pz.getZoom(), pan: pz.getPan(), c: centre(), d: spread() } : null;
  }
  function move() {
    if (!start) return;
    const c = centre();
    let k = start.k;
    if (points.size > 1 && start.d > 0) {
      pz.zoom(start.zoom * spread() / start.d); // relative to svg-pan-zoom's base, clamped to its limits
      k = pz.getSizes().realZoom;
    }
    // the drawing's point under the fingers' first centre stays under their centre now
    pz.pan({ x: c.x - (start.c.x - start.pan.x) * k / start.k, y: c.y - (start.c.y - start.pan.y) * k / start.k });
  }
  const on = {
    pointerdown(ev) { if (ev.pointerType !== "touch") return; points.set(ev.pointerId, { x: ev.clientX, y: ev.clientY }); begin(); },
    pointermove(ev) {
      const p = points.get(ev.pointerId);
      if (!p) return;
      p.x = ev.clientX; p.y = ev.clientY;
      move();
    },
    pointerup(ev) { if (points.delete(ev.pointerId)) begin(); },
    pointercancel(ev) { if (points.delete(ev.pointerId)) begin(); },
  };
  return {
    haltEventListeners: ["touchstart", "touchend", "touchmove", "touchleave", "touchcancel"],
    init(options) {
      svg = options.svgElement;
      pz = options.instance;
      for (const [name, fn] of Object.entries(on)) svg.addEventListener(name, fn);
    },
    destroy() {
      for (const [name, fn] of Object.entries(on)) svg.removeEventListener(name, fn);
      points.clear();
    },
  };
}

export { handler };
