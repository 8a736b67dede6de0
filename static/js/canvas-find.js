// Find on the canvas, pure (no DOM): the nodes of a scene that hold every word of a query in
// their id, label lines or status, in any case; a node with no status reads "status: none".
// canvas-nav.js brings the hits into view; tests/js/find.test.mjs runs this in node.

function haystack(n) {
  return (n.id + "\n" + n.lines.join("\n") + "\nstatus: " + (n.status || "none")).toLowerCase();
}

export function matches(scene, query) {
  const q = query.trim().toLowerCase();
  if (!scene || !q) return [];
  const words = q.split(/\s+/);
  return scene.nodes.filter((n) => { const h = haystack(n); return words.every((w) => h.includes(w)); });
}
