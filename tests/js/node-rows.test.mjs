// A node's rows on the replay page and in the offline file (static/js/replay-frame.js): the
// rows up to the frame whose node_id is the node's id, or the Go port's `n_` id without it.
import { test } from "node:test";
import assert from "node:assert/strict";
import { nodeRows } from "../../static/js/replay-frame.js";

const rows = [
  [1, 1, "t1", "003-N1", "read", "s"],
  [2, 2, "t2", "003-N2", "edit", "s"],
  [3, 3, "t3", "003-N1", "test", "s"],
  [4, 4, "t4", "wait", "run", "s"],
];

test("a node holds the rows that name it, up to the frame", () => {
  assert.deepEqual(nodeRows(rows, "003-N1", 3).map((r) => r[0]), [1, 3]);
  assert.deepEqual(nodeRows(rows, "003-N1", 1).map((r) => r[0]), [1]);
});

test("the Go port's n_ node holds the rows that spell it without n_", () => {
  assert.deepEqual(nodeRows(rows, "n_003-N2", 3).map((r) => r[0]), [2]);
  assert.deepEqual(nodeRows(rows, "003-N9", 3), []);
});
