// The node shapes of memviz's renderer in mermaid's outlines (the classic syntax and the
// `@{ shape }` names canvases/scene_shapes.py maps), centred on 0,0; canvas-draw.js draws them.
(function () {
  "use strict";
  const PAD_X = 15, PAD_Y = 15; // mermaid's node padding (canvas-draw.js measures the text)

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
      case "document": { const wave = h / 8; return `<path class="shape" d="M${x},${y}H${-x}V${-y - wave}C${-x / 2},${-y - 2 * wave} ${x / 2},${-y + wave} ${x},${-y - wave}Z"`; }
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
    "notched_rect", "lined_rect", "stacked_rect", "delay"]);
  // shapes mermaid draws without their label inside (a dot, a bar): the label is not shown
  const NO_LABEL = new Set(["small_circle", "filled_circle", "framed_circle", "fork"]);

  window.memvizShapes = { shapeSize, shapeSvg, SHAPES, NO_LABEL };
})();
