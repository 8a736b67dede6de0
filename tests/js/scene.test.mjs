// Drawing a scene (static/js/canvas-draw.js) is pure apart from measuring text, which node is
// given here as 8 px per character: what is drawn, collapsed groups, wrapping, escaping.
import { test } from "node:test";
import assert from "node:assert/strict";
import { draw, normalize, useMeasure } from "../../static/js/canvas-draw.js";

useMeasure((text) => 8 * [...text].length);

// what canvases/canvas_scene.py sends for a small canvas with a group and a hostile label
const scene = () => normalize({
  small: true, direction: "TD",
  nodes: [
    { id: "N1", lines: ["Read: router.ts", "status: done"], key: "done", group: "G1" },
    { id: "N2", lines: ["<script>alert(1)</script> a very long label that needs to wrap across several lines of text", "status: doing"], key: "doing", group: "G1" },
    { id: "N3", lines: ["Run pytest", "status: blocked"], key: "blocked" },
  ],
  edges: [{ s: "N1", t: "N2", kind: "arrow" }, { s: "N2", t: "N3", kind: "arrow", label: "fails" }],
  groups: [{ id: "G1", title: "Reading", parent: null, css: "" }],
});
const drawnIds = (svg) => [...svg.matchAll(/data-memviz-id="([^"]*)"/g)].map((m) => m[1]).sort();
const overlaps = (a, b) => Math.abs(a.x - b.x) * 2 < a.w + b.w && Math.abs(a.y - b.y) * 2 < a.h + b.h;

test("every node is drawn once, placed, and no two boxes overlap", () => {
  const { svg, model } = draw(scene(), { title: "t" });
  assert.deepEqual(drawnIds(svg), ["N1", "N2", "N3"]);
  const boxes = ["N1", "N2", "N3"].map((id) => model.boxes.get(id));
  for (const b of boxes) assert.ok(Number.isFinite(b.x) && Number.isFinite(b.y) && b.w > 0 && b.h > 0);
  for (let i = 0; i < 3; i++) for (let j = i + 1; j < 3; j++) assert.ok(!overlaps(boxes[i], boxes[j]), `${i} and ${j} overlap`);
  assert.ok(boxes[0].y < boxes[1].y && boxes[1].y < boxes[2].y, "top-down, in edge order");
});

test("a collapsed group is one summary node that counts its members and shows their worst status", () => {
  const { svg, model } = draw(scene(), { title: "t", collapsed: new Set(["G1"]) });
  assert.deepEqual(drawnIds(svg), ["G1", "N3"]);
  const summary = model.leaves.get("G1");
  assert.equal(summary.key, "doing"); // doing outranks done (statuses.js urgency)
  assert.match(svg, /2 nodes/);
});

test("a label wider than 200 px wraps; tool text is escaped, never markup", () => {
  const { svg, model } = draw(scene(), { title: "t" });
  assert.ok(model.leaves.get("N2").lines.length > 3, "the long line wrapped");
  assert.ok(model.leaves.get("N1").lines.length === 2, "short lines stay whole");
  assert.ok(!svg.includes("<script"), "no script element in the drawing");
  assert.match(svg, /&lt;script&gt;alert\(1\)&lt;\/script&gt;/);
});
