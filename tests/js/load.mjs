// Loads memviz's browser scripts (IIFEs that set window.memviz*) into a plain object, for node.
import { readFileSync } from "node:fs";
import { runInNewContext } from "node:vm";

const STATIC = new URL("../../static/js/", import.meta.url);

export function load(...names) {
  const window = {};
  // what a script touches when it loads: listeners it adds are never called here
  const document = { addEventListener() {}, getElementById: () => null, querySelector: () => null };
  const context = { window, document, setTimeout, clearTimeout, Map, Set, Math, Array, Object, Number, String, JSON, Float64Array, Int32Array, Uint8Array, Infinity, NaN };
  for (const name of names) runInNewContext(readFileSync(new URL(name, STATIC), "utf8"), context, { filename: name });
  return window;
}
