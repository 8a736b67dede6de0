// One frame of a replay, shared by the replay page (replay.js) and the offline file (offline.js):
// the canvas as it stood, drawn by memviz's renderer (labels are escaped text) with its error
// said in place, the nodes a click opens, and the small element helper both build with.
import { drawStatic } from "./canvas-draw.js";

// The rows up to `last` that a canvas node `id` holds: a row's node_id is the node's id or, for
// the Go port's `n_` form, the id without it (agentfs/row_fields.node_aliases).
export function nodeRows(rows, id, last) {
  const aliases = new Set([id, id.replace(/^n_/, "")]);
  const out = [];
  for (let k = 0; k <= last; k++) if (aliases.has(rows[k][3])) out.push(rows[k]);
  return out;
}

export function el(tag, cls, text) {
  const e = document.createElement(tag);
  if (cls) e.className = cls;
  if (text !== undefined && text !== null) e.textContent = String(text);
  return e;
}

export function showError(errorBox, err) {
  errorBox.hidden = false;
  errorBox.textContent = String(err && err.message ? err.message : err);
}

// `scene` (canvases/canvas_scene.py) drawn into `host`; false, with the error shown, when it cannot be
export function drawFrame(host, errorBox, scene, options) {
  errorBox.hidden = true;
  try {
    drawStatic(host, scene, { collapsed: new Set(), ...options });
    return true;
  } catch (err) {
    host.replaceChildren();
    showError(errorBox, err);
    return false;
  }
}

// the drawn nodes of `drawing` whose ids the frame knows, marked clickable: id -> element
export function clickableNodes(drawing, known) {
  const nodes = new Map();
  drawing.querySelectorAll("g.node[data-memviz-id]").forEach((g) => {
    const id = g.dataset.memvizId;
    if (!known.has(id)) return;
    g.classList.add("clickable");
    nodes.set(id, g);
  });
  return nodes;
}
