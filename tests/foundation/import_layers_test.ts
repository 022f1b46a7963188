// The code's layers (docs/architecture.md): no import circle anywhere in lib/, cli/ or routes/, lib/ imports
// neither routes/ nor cli/, and routes/ does not import cli/.

import { assertEquals } from "../helpers/assert.ts";
import { circles, type Edge, importEdges } from "../helpers/import_graph.ts";

const repo = new URL("../../", import.meta.url);

function graphOf(edges: Edge[]): Map<string, Set<string>> {
  const graph = new Map<string, Set<string>>();
  for (const e of edges) {
    if (!e.inside) continue;
    if (!graph.has(e.from)) graph.set(e.from, new Set());
    graph.get(e.from)!.add(e.to);
  }
  return graph;
}

/** Imports from `folder` that reach into one of `forbidden` (top-level folders of the repository). */
function reachingInto(edges: Edge[], forbidden: string[]): string[] {
  return edges.filter((e) => !e.inside && forbidden.some((f) => e.to.startsWith(new URL(f, repo).href)))
    .map((e) => `${e.from} → ${e.to.slice(repo.href.length)}`);
}

for (const folder of ["lib/", "cli/", "routes/"]) {
  Deno.test(`${folder}: no import circle`, async () => {
    assertEquals(circles(graphOf(await importEdges(new URL(folder, repo)))), []);
  });
}

Deno.test("lib/ imports neither routes/ nor cli/; routes/ does not import cli/", async () => {
  assertEquals(reachingInto(await importEdges(new URL("lib/", repo)), ["routes/", "cli/"]), []);
  assertEquals(reachingInto(await importEdges(new URL("routes/", repo)), ["cli/"]), []);
});
