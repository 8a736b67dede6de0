// Find on the canvas (static/js/canvas-find.js): every word, anywhere in a node's id,
// label lines or status, in any case.
import { test } from "node:test";
import assert from "node:assert/strict";
import { matches } from "../../static/js/canvas-find.js";

const scene = {
  nodes: [
    { id: "001-N1", lines: ["Read: router.ts", "status: done"], status: "done" },
    { id: "001-N2", lines: ["修复: 重构 export.py", "summary: TTL 硬编码"], status: "doing" },
    { id: "001-N3", lines: ["Run pytest", "Timestamp: 2026-06-11"], status: "" },
  ],
};
const ids = (query) => matches(scene, query).map((n) => n.id);

test("every word must match, in any order and case", () => {
  assert.deepEqual(ids("ROUTER read"), ["001-N1"]);
  assert.deepEqual(ids("router pytest"), []);
});

test("ids, Chinese label text and statuses are found; a node with no status is 'none'", () => {
  assert.deepEqual(ids("001-n2"), ["001-N2"]);
  assert.deepEqual(ids("重构"), ["001-N2"]);
  assert.deepEqual(ids("status: doing"), ["001-N2"]);
  assert.deepEqual(ids("status: none"), ["001-N3"]);
});

test("an empty query or no scene finds nothing", () => {
  assert.deepEqual(ids("   "), []);
  assert.deepEqual(matches(null, "x"), []);
});
