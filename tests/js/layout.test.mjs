// The canvas layout (static/js/canvas-layout.js) is pure: positions from sizes and links.
import { test } from "node:test";
import assert from "node:assert/strict";
import * as L from "../../static/js/canvas-layout.js";

function overlaps(a, b) {
  return Math.abs(a.x - b.x) * 2 < a.w + b.w && Math.abs(a.y - b.y) * 2 < a.h + b.h;
}

test("a chain is laid out top-down, one rank apart, nothing overlapping", () => {
  const items = Array.from({ length: 5 }, () => ({ w: 120, h: 40 }));
  const links = [[0, 1], [1, 2], [2, 3], [3, 4]];
  const { x, y } = L.layered(items, links);
  for (let i = 1; i < 5; i++) assert.ok(y[i] > y[i - 1], `rank ${i} below ${i - 1}`);
  for (let i = 1; i < 5; i++) assert.ok(y[i] - y[i - 1] >= 40 + L.RANK_SEP - 1e-9);
  assert.ok(x.every(Number.isFinite) && y.every(Number.isFinite));
});

test("a cycle is broken: every node still gets a finite place and an edge route", () => {
  const items = Array.from({ length: 3 }, () => ({ w: 80, h: 30 }));
  const { x, y, routes } = L.layered(items, [[0, 1], [1, 2], [2, 0]]);
  assert.ok([...x, ...y].every(Number.isFinite));
  assert.equal(new Set(y).size, 3); // three ranks, not one
  for (const pts of routes.values()) assert.ok(pts.every(([px, py]) => Number.isFinite(px) && Number.isFinite(py)));
});

test("siblings of one rank keep the node gap between them", () => {
  const items = [{ w: 100, h: 40 }, { w: 60, h: 40 }, { w: 140, h: 40 }, { w: 90, h: 40 }];
  const { x, y } = L.layered(items, [[0, 1], [0, 2], [0, 3]]);
  const row = [1, 2, 3].sort((a, b) => x[a] - x[b]);
  assert.ok(row.every((i) => y[i] === y[1]));
  for (let k = 1; k < row.length; k++) {
    const [a, b] = [row[k - 1], row[k]];
    assert.ok(x[b] - x[a] >= (items[a].w + items[b].w) / 2 + L.NODE_SEP - 1e-9);
  }
});

test("duplicate links share one route; a self-link is drawn apart (no route)", () => {
  const items = [{ w: 50, h: 20 }, { w: 50, h: 20 }];
  const { routes } = L.layered(items, [[0, 1], [0, 1], [1, 1]]);
  assert.deepEqual(routes.get(1), routes.get(0));
  assert.equal(routes.has(2), false);
});

function tree() {
  const leaf = (id) => ({ id, w: 100, h: 40 });
  return {
    id: "root",
    children: [
      leaf("a"),
      { id: "g", title: "group", titleW: 60, children: [leaf("b"), leaf("c")] },
      leaf("d"),
    ],
  };
}

test("a group's box holds its children and overlaps no sibling, in every direction", () => {
  for (const direction of ["TD", "LR", "BT", "RL"]) {
    const edges = [{ a: "a", b: "b" }, { a: "b", b: "c" }, { a: "c", b: "d" }];
    const { boxes, width, height } = L.layout(tree(), edges, direction);
    const g = boxes.get("g");
    for (const id of ["b", "c"]) {
      const c = boxes.get(id);
      assert.ok(c.x - c.w / 2 >= g.x - g.w / 2 && c.x + c.w / 2 <= g.x + g.w / 2, `${direction}: ${id} inside g (x)`);
      assert.ok(c.y - c.h / 2 >= g.y - g.h / 2 && c.y + c.h / 2 <= g.y + g.h / 2, `${direction}: ${id} inside g (y)`);
    }
    for (const [p, q] of [["a", "g"], ["g", "d"], ["a", "d"], ["b", "c"]]) {
      assert.ok(!overlaps(boxes.get(p), boxes.get(q)), `${direction}: ${p} and ${q} overlap`);
    }
    for (const b of boxes.values()) {
      assert.ok(b.x - b.w / 2 >= -1e-9 && b.x + b.w / 2 <= width + 1e-9, `${direction}: inside the width`);
      assert.ok(b.y - b.h / 2 >= -1e-9 && b.y + b.h / 2 <= height + 1e-9, `${direction}: inside the height`);
    }
  }
});

test("a tree whose ids repeat (a group inside itself) is laid out, not looped on", () => {
  const g = { id: "g", title: "g", titleW: 10, children: [{ id: "x", w: 10, h: 10 }] };
  g.children.push(g);
  const { boxes } = L.layout({ id: "root", children: [g] }, [], "TD");
  assert.ok(boxes.has("x") && boxes.has("g"));
});

test("an edge across ranks is routed between its ends, inside the drawing", () => {
  // a -> d skips the group's rank: it needs bends (an edge to the next rank is drawn straight)
  const edges = [{ a: "a", b: "g" }, { a: "g", b: "d" }, { a: "a", b: "d" }];
  const { boxes, routes, width, height } = L.layout(tree(), edges, "TD");
  const pts = routes.get(2);
  assert.ok(pts && pts.length >= 1, "a route for the long edge");
  const [a, d] = [boxes.get("a"), boxes.get("d")];
  for (const [px, py] of pts) {
    assert.ok(Number.isFinite(px) && Number.isFinite(py));
    assert.ok(px >= 0 && px <= width && py >= 0 && py <= height);
    assert.ok(py > a.y && py < d.y, "its bends lie between its ends' ranks");
  }
});

test("groups nested thousands deep are laid out without running out of stack", () => {
  let inner = { id: "n", w: 40, h: 20 };
  for (let k = 0; k < 20000; k++) inner = { id: `g${k}`, title: "", titleW: 0, children: [inner] };
  const { boxes } = L.layout({ id: "root", children: [inner] }, [], "TD");
  const n = boxes.get("n"), outer = boxes.get("g19999");
  assert.ok(Number.isFinite(n.x) && Number.isFinite(n.y));
  assert.ok(n.x - n.w / 2 >= outer.x - outer.w / 2 && n.y + n.h / 2 <= outer.y + outer.h / 2);
});
