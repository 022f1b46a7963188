// The shape of routes/registry/ (issue #23): rooms in subfolders standing in one order, core ← services ← api,
// and mod.ts wiring them; no import circle between rooms, and none between the web console's files. Read from
// the source's import statements, so the structure stays.
//
//   mod.ts        the entry: the route table (may import anything; nothing in the folder imports it)
//   core/**       model, rules, state, caller and permissions, errors, events: imports only core/ (and lib/)
//   services/**   typed operations for a caller: imports core/
//   api/**        HTTP handlers (parse, call, render): imports core/ and services/

import { assert, assertEquals } from "../helpers/assert.ts";
import {
  circles,
  type Edge,
  groupGraph,
  importEdges,
  importSpecifiers,
  sources,
} from "../helpers/import_graph.ts";

const registry = new URL("../../routes/registry/", import.meta.url);
const webConsole = new URL("../../routes/console/", import.meta.url);
/** Each room and the rooms it may import (itself included). */
const allowed: Record<string, string[]> = {
  core: ["core"],
  services: ["core", "services"],
  api: ["core", "services", "api"],
};

function roomOf(path: string): string {
  if (path === "mod.ts") return "entry";
  const slash = path.indexOf("/");
  return slash < 0 ? "top level" : path.slice(0, slash);
}

const show = (edges: Edge[]) => edges.map((e) => `${e.from} → ${e.to}`);

Deno.test("registry layout: the parser sees every form of import", () => {
  const src = [
    'import { a } from "./a.ts";',
    "import type { B } from '../b.ts';",
    'import {\n  c,\n  type D,\n} from "./core/c.ts";',
    'export { e } from "./e.ts";',
    'import "./g.ts";',
    'const h = await import("./h.ts");',
    'import { x } from "re2js";',
  ].join("\n");
  assertEquals(importSpecifiers(src), ["./a.ts", "../b.ts", "./core/c.ts", "./e.ts", "./g.ts", "./h.ts"]);
});

Deno.test("registry layout: every file is in a room but mod.ts", async () => {
  const files = await sources(registry);
  assertEquals(files.filter((f) => !(roomOf(f) in allowed) && f !== "mod.ts"), []);
  for (const room of Object.keys(allowed)) assert(files.some((f) => roomOf(f) === room), `no ${room}/ files`);
});

Deno.test("registry layout: each room imports only the rooms before it, nothing imports mod.ts", async () => {
  const edges = await importEdges(registry);
  assert(edges.length > 150, `only ${edges.length} imports found: is the parser still reading the files?`);
  const wrong = edges.filter((e) =>
    e.inside && (roomOf(e.to) === "entry" ||
      (roomOf(e.from) !== "entry" && !allowed[roomOf(e.from)]!.includes(roomOf(e.to))))
  );
  assertEquals(show(wrong), [], "core ← services ← api: a room imports only itself and the rooms before it");
  const graph = groupGraph(edges, roomOf);
  assertEquals(circles(graph), [], "rooms import each other in a circle");
});

Deno.test("registry layout: no import circle between the registry's files either", async () => {
  assertEquals(circles(groupGraph(await importEdges(registry), (file) => file)), []);
});

Deno.test("registry layout: the registry imports nothing of the web console", async () => {
  const edges = await importEdges(registry);
  assertEquals(show(edges.filter((e) => !e.inside && e.to.includes("/routes/console/"))), []);
});

Deno.test("console layout: no import circle between the console's files", async () => {
  const edges = await importEdges(webConsole);
  assert(edges.length > 50, `only ${edges.length} imports found`);
  const found = circles(groupGraph(edges, (file) => file));
  assertEquals(found, [], "the console's files import each other in a circle");
});
