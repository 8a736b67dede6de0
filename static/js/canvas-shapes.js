// The node shapes of memviz's renderer in mermaid's outlines (the classic syntax and the
// `@{ shape }` names canvases/scene_shapes.py maps), centred on 0,0, and its edge paths and
// markers (d3's basis curve, as mermaid); canvas-draw.js draws with them.
const PAD_X = 15, PAD_Y = 15; // mermaid's node padding (canvas-draw.js measures the text)
const ICON = 48; // an icon or image node's box

// ---- shapes (mermaid's classic look), centred on 0,0 ----------------------------------------
function shapeSize(shape, tw, th) {
  let w = tw + 2 * PAD_X, h = th + 2 * PAD_Y;
  switch (shape) {
    case "stadium": w += h / 2; break;
    case "subroutine": w += 16; break;
    case "circle": w = h = Math.max(w, h); break;
    case "double_circle": w = h = Math.max(w, h) + 10; break;
    case "rhombus": w = h = tw + th + 2 * PAD_X; break;
    case "hexagon": w += h / 2; break;
    case "asymmetric": w += h / 2; break;
    case "parallelogram": case "parallelogram_alt": case "trapezoid": case "trapezoid_alt": w += h; break;
    case "cylinder": h += 2 * (w / 2 / (2.5 + w / 50)); break;
    case "document": h += h / 8; break;
    case "triangle": case "flipped_triangle": w = Math.max(w, h) * 1.6; h = w * 0.75; break;
    case "small_circle": case "filled_circle": case "framed_circle": w = h = 16; break;
    case "fork": w = 70; h = 10; break;
    case "hourglass": w = h = 30; break;
    case "delay": w += h / 2; break;
    case "bolt": w = 35; h = 70; break;
    case "crossed_circle": w = h = 60; break;
    case "brace_l": case "brace_r": w += 12; break;
    case "braces": w += 24; break;
    case "h_cylinder": w += h / 2; break;
    case "lined_cylinder": h += 2 * (w / 2 / (2.5 + w / 50)) + 8; break;
    case "curved_trapezoid": w += h / 2; break;
    case "divided_rect": h += 10; break;
    case "window_pane": w += 10; h += 10; break;
    case "lined_document": w += 8; h += h / 8; break;
    case "notched_pentagon": h += 8; break;
    case "sloped_rect": h += 12; break;
    case "stacked_document": w += 10; h += h / 8 + 10; break;
    case "flag": h += 16; break;
    case "bow_rect": w += h / 3; break;
    case "tagged_document": h += h / 8; break;
    case "cloud": w += 30; h += 20; break;
    case "bang": w += 40; h += 30; break;
    case "datastore": h += 6; break;
    case "icon": case "icon_square": case "icon_circle": case "icon_rounded": case "image":
      w = Math.max(tw + 8, ICON); h = ICON + 8 + th; break;
    default: break;
  }
  return { w, h };
}
const poly = (pts) => `<polygon class="shape" points="${pts.map((p) => p.map((v) => v.toFixed(1)).join(",")).join(" ")}"`;
function shapeSvg(shape, w, h) {
  const x = -w / 2, y = -h / 2;
  switch (shape) {
    case "round": return `<rect class="shape" x="${x}" y="${y}" width="${w}" height="${h}" rx="5" ry="5"`;
    case "stadium": return `<rect class="shape" x="${x}" y="${y}" width="${w}" height="${h}" rx="${h / 2}" ry="${h / 2}"`;
    case "circle": return `<circle class="shape" r="${w / 2}"`;
    case "double_circle": return `<circle class="shape outer" r="${w / 2}"/><circle class="shape" r="${w / 2 - 5}"`;
    case "rhombus": return poly([[0, y], [-x, 0], [0, -y], [x, 0]]);
    case "hexagon": { const m = h / 4; return poly([[x + m, y], [-x - m, y], [-x, 0], [-x - m, -y], [x + m, -y], [x, 0]]); }
    case "asymmetric": return poly([[x, y], [-x, y], [-x, -y], [x, -y], [x + h / 2, 0]]);
    case "parallelogram": return poly([[x + h / 2, y], [-x, y], [-x - h / 2, -y], [x, -y]]);
    case "parallelogram_alt": return poly([[x, y], [-x - h / 2, y], [-x, -y], [x + h / 2, -y]]);
    case "trapezoid": return poly([[x + h / 2, y], [-x - h / 2, y], [-x, -y], [x, -y]]);
    case "trapezoid_alt": return poly([[x, y], [-x, y], [-x - h / 2, -y], [x + h / 2, -y]]);
    case "subroutine": return `<rect class="shape" x="${x}" y="${y}" width="${w}" height="${h}"/><path class="shape-line" d="M${x + 8},${y}V${-y}M${-x - 8},${y}V${-y}"`;
    case "cylinder": {
      const rx = w / 2, ry = rx / (2.5 + w / 50);
      return `<path class="shape" d="M${x},${y + ry}a${rx},${ry} 0 0,0 ${w},0a${rx},${ry} 0 0,0 ${-w},0l0,${h - 2 * ry}a${rx},${ry} 0 0,0 ${w},0l0,${-(h - 2 * ry)}"`;
    }
    case "text": return `<rect class="shape shape-text" x="${x}" y="${y}" width="${w}" height="${h}"`;
    case "bolt": { const g = 7; return poly([[-x, y], [x, g / 2], [-x - 2 * g, g / 2], [x, -y], [-x, -g / 2], [x + 2 * g, -g / 2]]); }
    case "crossed_circle": { const r = w / 2, d = r / Math.SQRT2; return `<circle class="shape" r="${r}"/><path class="shape-line" d="M${-d},${-d}L${d},${d}M${d},${-d}L${-d},${d}"`; }
    case "brace_l": case "brace_r": case "braces": {
      // a curly brace beside the text: the box itself is not drawn (mermaid's comment shapes)
      const b = (at, sign) => { const k = sign * 6; return `M${at + k},${y}Q${at},${y} ${at},${y + 6}V${-3}Q${at},0 ${at - k},0Q${at},0 ${at},3V${-y - 6}Q${at},${-y} ${at + k},${-y}`; };
      const d = (shape !== "brace_r" ? b(x + 2, 1) : "") + (shape !== "brace_l" ? b(-x - 2, -1) : "");
      return `<rect class="shape shape-text" x="${x}" y="${y}" width="${w}" height="${h}"/><path class="shape-line" d="${d}"`;
    }
    case "h_cylinder": {
      const ry = h / 2, rx = h / 4;
      return `<path class="shape" d="M${x + rx},${y}H${-x - rx}A${rx},${ry} 0 0,1 ${-x - rx},${-y}H${x + rx}A${rx},${ry} 0 0,1 ${x + rx},${y}Z"/><path class="shape-line" d="M${-x - rx},${y}A${rx},${ry} 0 0,0 ${-x - rx},${-y}"`;
    }
    case "lined_cylinder": {
      const rx = w / 2, ry = rx / (2.5 + w / 50);
      return `<path class="shape" d="M${x},${y + ry}a${rx},${ry} 0 0,0 ${w},0a${rx},${ry} 0 0,0 ${-w},0l0,${h - 2 * ry}a${rx},${ry} 0 0,0 ${w},0l0,${-(h - 2 * ry)}"/><path class="shape-line" d="M${x},${y + ry + 8}a${rx},${ry} 0 0,0 ${w},0"`;
    }
    case "curved_trapezoid": { const r = h / 2; return `<path class="shape" d="M${x},0L${x + r},${y}H${-x - r}A${r},${r} 0 0,1 ${-x - r},${-y}H${x + r}Z"`; }
    case "divided_rect": return `<rect class="shape" x="${x}" y="${y}" width="${w}" height="${h}"/><path class="shape-line" d="M${x},${y + 10}H${-x}"`;
    case "window_pane": return `<rect class="shape" x="${x}" y="${y}" width="${w}" height="${h}"/><path class="shape-line" d="M${x},${y + 10}H${-x}M${x + 10},${y}V${-y}"`;
    case "document": case "lined_document": case "tagged_document": {
      const wave = h / 8;
      let out = `<path class="shape" d="M${x},${y}H${-x}V${-y - wave}C${-x / 2},${-y - 2 * wave} ${x / 2},${-y + wave} ${x},${-y - wave}Z"`;
      if (shape === "lined_document") out += `/><path class="shape-line" d="M${x + 8},${y}V${-y - wave}"`;
      if (shape === "tagged_document") out += `/><path class="shape-line" d="M${-x - 14},${-y - wave * 1.6}L${-x},${-y - wave * 2.6}"`;
      return out;
    }
    case "stacked_document": {
      // two copies behind, up and to the right, as mermaid stacks them
      const wave = (h - 10) / 9, top = y + 10;
      const doc = (d, cls) => `<path class="${cls}" d="M${x + d},${top - d}H${-x - 10 + d}V${-y - wave - d}C${(-x - 10) / 2 + d},${-y - 2 * wave - d} ${x / 2 + d},${-y + wave - d} ${x + d},${-y - wave - d}Z"`;
      return `${doc(10, "shape shape-back")}/>${doc(5, "shape shape-back")}/>${doc(0, "shape")}`;
    }
    case "notched_pentagon": { const m = Math.min(h / 3, 14); return poly([[x + m, y], [-x - m, y], [-x, y + m], [-x, -y], [x, -y], [x, y + m]]); }
    case "sloped_rect": return poly([[x, y + 12], [-x, y], [-x, -y], [x, -y]]);
    case "flag": { const a = 8; return `<path class="shape" d="M${x},${y + a}C${x / 2},${y - a} ${-x / 2},${y + 3 * a} ${-x},${y + a}V${-y - a}C${-x / 2},${-y + a} ${x / 2},${-y - 3 * a} ${x},${-y - a}Z"`; }
    case "bow_rect": { const r = h / 6; return `<path class="shape" d="M${x + r},${y}H${-x}A${r},${-y} 0 0,0 ${-x},${-y}H${x + r}A${r},${-y} 0 0,1 ${x + r},${y}Z"`; }
    case "tagged_rect": { const t = Math.min(12, h / 3); return `<rect class="shape" x="${x}" y="${y}" width="${w}" height="${h}"/><path class="shape-line" d="M${-x - t},${-y}L${-x},${-y - t}"`; }
    case "cloud": {
      const rx = w / 6, ry = h / 4;
      return `<path class="shape" d="M${x + rx},${-y - ry}A${rx},${ry} 0 0,1 ${x + rx},${y + ry * 1.4}A${rx * 1.2},${ry * 1.2} 0 0,1 ${0},${y + ry * 0.6}A${rx * 1.2},${ry * 1.2} 0 0,1 ${-x - rx},${y + ry * 1.4}A${rx},${ry} 0 0,1 ${-x - rx},${-y - ry}A${rx * 1.3},${ry * 1.2} 0 0,1 ${0},${-y - ry * 0.4}A${rx * 1.3},${ry * 1.2} 0 0,1 ${x + rx},${-y - ry}Z"`;
    }
    case "bang": {
      const pts = [];
      for (let k = 0; k < 16; k++) { const a = (k / 16) * 2 * Math.PI, f = k % 2 ? 0.78 : 1; pts.push([Math.cos(a) * -x * f, Math.sin(a) * -y * f]); }
      return poly(pts);
    }
    case "icon": case "icon_square": case "icon_circle": case "icon_rounded": case "image": {
      // the icon's box above its label (labelOffset), blank: memviz draws no icon packs or images
      const r = shape === "icon_circle" ? ICON / 2 : shape === "icon_rounded" ? 8 : 0;
      return `<rect class="shape shape-icon" x="${-ICON / 2}" y="${y}" width="${ICON}" height="${ICON}" rx="${r}" ry="${r}"`;
    }
    case "datastore": return `<rect class="shape shape-text" x="${x}" y="${y}" width="${w}" height="${h}"/><path class="shape-line" d="M${x},${y}H${-x}M${x},${-y}H${-x}"`;
    case "triangle": return poly([[0, y], [-x, -y], [x, -y]]);
    case "flipped_triangle": return poly([[x, y], [-x, y], [0, -y]]);
    case "small_circle": return `<circle class="shape" r="${w / 2}"`;
    case "filled_circle": return `<circle class="shape shape-filled" r="${w / 2}"`;
    case "framed_circle": return `<circle class="shape outer" r="${w / 2}"/><circle class="shape shape-filled" r="${w / 2 - 4}"`;
    case "fork": return `<rect class="shape shape-filled" x="${x}" y="${y}" width="${w}" height="${h}"`;
    case "hourglass": return poly([[x, y], [-x, y], [x, -y], [-x, -y]]);
    case "notched_rect": return poly([[x + 12, y], [-x, y], [-x, -y], [x, -y], [x, y + 12]]);
    case "lined_rect": return `<rect class="shape" x="${x}" y="${y}" width="${w}" height="${h}"/><path class="shape-line" d="M${x + 8},${y}V${-y}"`;
    case "stacked_rect": return `<path class="shape-line" d="M${x + 5},${y - 5}H${-x + 5}V${-y - 5}"/><rect class="shape" x="${x}" y="${y}" width="${w}" height="${h}"`;
    case "delay": { const r = h / 2; return `<path class="shape" d="M${x},${y}H${-x - r}A${r},${r} 0 0,1 ${-x - r},${-y}H${x}Z"`; }
    default: return `<rect class="shape" x="${x}" y="${y}" width="${w}" height="${h}"`;
  }
}
// the shapes drawn above; any other name is drawn (and reported, data-shape) as a rectangle
const SHAPES = new Set(["rect", "round", "stadium", "circle", "double_circle", "rhombus", "hexagon", "asymmetric",
  "parallelogram", "parallelogram_alt", "trapezoid", "trapezoid_alt", "subroutine", "cylinder", "text", "document",
  "triangle", "flipped_triangle", "small_circle", "filled_circle", "framed_circle", "fork", "hourglass",
  "notched_rect", "lined_rect", "stacked_rect", "delay", "bolt", "crossed_circle", "brace_l", "brace_r", "braces",
  "h_cylinder", "lined_cylinder", "curved_trapezoid", "divided_rect", "window_pane", "lined_document",
  "notched_pentagon", "sloped_rect", "stacked_document", "flag", "bow_rect", "tagged_document", "tagged_rect",
  "cloud", "bang", "datastore", "icon", "icon_square", "icon_circle", "icon_rounded", "image"]);
// where a shape's label sits: below an icon's box, else at the centre
const labelOffset = (shape, h, th) => (/^(icon|image)/.test(shape) ? h / 2 - th / 2 : 0);
// shapes mermaid draws without their label (a dot, a bar, an hourglass, a bolt, a crossed circle)
const NO_LABEL = new Set(["small_circle", "filled_circle", "framed_circle", "fork", "hourglass", "bolt", "crossed_circle"]);

// ---- edges ------------------------------------------------------------------------------------
// d3's curveBasis (what mermaid draws with) through the points, as segments: {a, c1, c2, b}
// (a cubic from a to b) or {a, b} (a line)
function basisSegments(pts) {
  const segs = [];
  if (pts.length < 3) {
    for (let i = 1; i < pts.length; i++) segs.push({ a: pts[i - 1], b: pts[i] });
    return segs;
  }
  let [x0, y0] = pts[0], [x1, y1] = pts[1];
  let at = [(5 * x0 + x1) / 6, (5 * y0 + y1) / 6];
  segs.push({ a: pts[0], b: at });
  const cubic = (x, y, end) => {
    const b = end || [(x0 + 4 * x1 + x) / 6, (y0 + 4 * y1 + y) / 6];
    segs.push({ a: at, c1: [(2 * x0 + x1) / 3, (2 * y0 + y1) / 3], c2: [(x0 + 2 * x1) / 3, (y0 + 2 * y1) / 3], b });
    at = b;
  };
  for (let i = 2; i < pts.length; i++) {
    const [x, y] = pts[i];
    cubic(x, y);
    [x0, y0, x1, y1] = [x1, y1, x, y];
  }
  cubic(2 * x1 - x0, 2 * y1 - y0, [x1, y1]); // ends exactly on the last point
  return segs;
}
const f1 = (v) => v.toFixed(1);
function pathOf(segs) {
  let d = segs.length ? `M${f1(segs[0].a[0])},${f1(segs[0].a[1])}` : "";
  for (const s of segs) d += s.c1 ? `C${f1(s.c1[0])},${f1(s.c1[1])},${f1(s.c2[0])},${f1(s.c2[1])},${f1(s.b[0])},${f1(s.b[1])}` : `L${f1(s.b[0])},${f1(s.b[1])}`;
  return d;
}
function basis(pts) { return pathOf(basisSegments(pts)); }
// A dashed edge is drawn as pieces of at most DASH_PIECE units. The rasteriser dashes a whole
// path for every tile its bounds touch: dotted edges across a 1000-node canvas (the longest
// 47,000 units) were dashed again for each tile, most of 450-650 ms of raster for one view.
const DASH_PIECE = 1500;
const mid = (p, q) => [(p[0] + q[0]) / 2, (p[1] + q[1]) / 2];
function halves(s) { // de Casteljau at t = 1/2
  if (!s.c1) { const m = mid(s.a, s.b); return [{ a: s.a, b: m }, { a: m, b: s.b }]; }
  const ab = mid(s.a, s.c1), bc = mid(s.c1, s.c2), cd = mid(s.c2, s.b), abc = mid(ab, bc), bcd = mid(bc, cd), m = mid(abc, bcd);
  return [{ a: s.a, c1: ab, c2: abc, b: m }, { a: m, c1: bcd, c2: cd, b: s.b }];
}
const reach = (s) => Math.hypot(s.b[0] - s.a[0], s.b[1] - s.a[1]) + (s.c1 ? Math.hypot(s.c1[0] - s.a[0], s.c1[1] - s.a[1]) + Math.hypot(s.b[0] - s.c2[0], s.b[1] - s.c2[1]) : 0);
function dashedPieces(pts) {
  const out = [];
  let piece = [], length = 0;
  const add = (s) => {
    const l = reach(s);
    if (l > DASH_PIECE) { const [h1, h2] = halves(s); add(h1); add(h2); return; }
    if (piece.length && length + l > DASH_PIECE) { out.push(pathOf(piece)); piece = []; length = 0; }
    piece.push(s);
    length += l;
  };
  basisSegments(pts).forEach(add);
  if (piece.length) out.push(pathOf(piece));
  return out;
}
// where the segment from the box centre towards p leaves the box
function clip(box, p, shape) {
  const dx = p[0] - box.x, dy = p[1] - box.y;
  if (!dx && !dy) return [box.x, box.y];
  let t;
  if (shape === "circle" || shape === "double_circle") t = (box.w / 2) / Math.hypot(dx, dy);
  else if (shape === "rhombus") t = 1 / (Math.abs(dx) / (box.w / 2) + Math.abs(dy) / (box.h / 2));
  else t = Math.min(dx ? (box.w / 2) / Math.abs(dx) : Infinity, dy ? (box.h / 2) / Math.abs(dy) : Infinity);
  t = Math.min(t, 1);
  return [box.x + dx * t, box.y + dy * t];
}
const MARKERS = {
  arrow: [null, "arrow"], dotted: [null, "arrow"], thick: [null, "arrow"], open: [null, null],
  dotted_open: [null, null], thick_open: [null, null], circle: [null, "circle"], cross: [null, "cross"],
  bidirectional: ["arrow", "arrow"], circle_both: ["circle", "circle"], cross_both: ["cross", "cross"], invisible: [null, null],
};
function markerDefs(id) {
  return `<defs>
<marker id="${id}-arrow-end" viewBox="0 0 10 10" refX="9" refY="5" markerUnits="userSpaceOnUse" markerWidth="12" markerHeight="12" orient="auto"><path class="marker" d="M0,0L10,5L0,10z"/></marker>
<marker id="${id}-arrow-start" viewBox="0 0 10 10" refX="1" refY="5" markerUnits="userSpaceOnUse" markerWidth="12" markerHeight="12" orient="auto"><path class="marker" d="M10,0L0,5L10,10z"/></marker>
<marker id="${id}-circle-end" viewBox="0 0 10 10" refX="9" refY="5" markerUnits="userSpaceOnUse" markerWidth="11" markerHeight="11" orient="auto"><circle class="marker" cx="5" cy="5" r="4.5"/></marker>
<marker id="${id}-cross-end" viewBox="0 0 11 11" refX="10" refY="5.5" markerUnits="userSpaceOnUse" markerWidth="11" markerHeight="11" orient="auto"><path class="marker cross" d="M1,1L10,10M10,1L1,10"/></marker>
<marker id="${id}-circle-start" viewBox="0 0 10 10" refX="1" refY="5" markerUnits="userSpaceOnUse" markerWidth="11" markerHeight="11" orient="auto"><circle class="marker" cx="5" cy="5" r="4.5"/></marker>
<marker id="${id}-cross-start" viewBox="0 0 11 11" refX="1" refY="5.5" markerUnits="userSpaceOnUse" markerWidth="11" markerHeight="11" orient="auto"><path class="marker cross" d="M1,1L10,10M10,1L1,10"/></marker>
</defs>`;
}

export { shapeSize, shapeSvg, SHAPES, NO_LABEL, labelOffset, basis, dashedPieces, clip, MARKERS, markerDefs };
