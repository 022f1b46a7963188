// The shape of routes/authmethods/ (issues #17, #23): a shared core of top-level files, rooms in subfolders,
// no import circle between rooms, and none between files inside a room or the core. Read from the source's
// import statements, so the structure stays.
//
//   mod.ts             the entry: the route table that wires the rooms together (may import anything)
//   other top-level    the core: imports only the core (and lib/), never a room or mod.ts
//   <room>/**          a room: imports the core and rooms below it, never one that imports it back

import { assert, assertEquals } from "../helpers/assert.ts";
import { circles, type Edge, importEdges, importSpecifiers } from "../helpers/import_graph.ts";

const root = new URL("../../routes/authmethods/", import.meta.url);
const entry = "mod.ts";

/** "entry", "core", or the room (first folder) a file belongs to. */
function roomOf(path: string): string {
  if (path === entry) return "entry";
  const slash = path.indexOf("/");
  return slash < 0 ? "core" : path.slice(0, slash);
}

/** Every relative import between two files of the family's folder. */
async function imports(): Promise<Edge[]> {
  return (await importEdges(root)).filter((e) => e.inside);
}

Deno.test("authmethods layout: the parser sees every form of import", () => {
  const src = [
    'import { a } from "./a.ts";',
    "import type { B } from '../b.ts';",
    'import {\n  c,\n  type D,\n} from "./lists/c.ts";',
    'export { e } from "./e.ts";',
    'export type { F } from "./f.ts";',
    'import "./g.ts";',
    'const h = await import("./h.ts");',
    'import { x } from "re2js";',
  ].join("\n");
  assertEquals(importSpecifiers(src), [
    "./a.ts",
    "../b.ts",
    "./lists/c.ts",
    "./e.ts",
    "./f.ts",
    "./g.ts",
    "./h.ts",
  ]);
});

Deno.test("authmethods layout: the core imports no room, and nothing imports the entry", async () => {
  const edges = await imports();
  assert(edges.length > 100, `only ${edges.length} imports found: is the parser still reading the files?`);
  const wrong = edges
    .filter((e) => (roomOf(e.from) === "core" && roomOf(e.to) !== "core") || roomOf(e.to) === "entry")
    .map((e) => `${e.from} → ${e.to}`);
  assertEquals(wrong, [], "the core (top-level files but mod.ts) may import only the core");
});

Deno.test("authmethods layout: no import circle between rooms", async () => {
  const edges = await imports();
  const graph = new Map<string, Set<string>>();
  const why = new Map<string, { a: string; b: string; file: string }>();
  for (const e of edges) {
    const [a, b] = [roomOf(e.from), roomOf(e.to)];
    if (a === b || a === "entry" || b === "core") continue;
    if (!graph.has(a)) graph.set(a, new Set());
    graph.get(a)!.add(b);
    why.set(`${a}→${b}`, { a, b, file: `${e.from} → ${e.to}` });
  }
  const rooms = new Set(edges.map((e) => roomOf(e.from)).filter((r) => r !== "core" && r !== "entry"));
  assert(rooms.size >= 4, `expected the family split into rooms, found ${[...rooms].join(", ")}`);
  const found = circles(graph).map((members) => {
    const inside = [...why.values()].filter((w) => members.includes(w.a) && members.includes(w.b));
    return `${members.join(" ⇄ ")}: ${inside.map((w) => `${w.a}→${w.b} (${w.file})`).join("; ")}`;
  });
  assertEquals(found, [], "rooms import each other in a circle");
});

Deno.test("authmethods layout: no import circle between files of one room, or of the core", async () => {
  const edges = await imports();
  const graph = new Map<string, Set<string>>();
  for (const e of edges) {
    // A file importing itself is a circle of one, which Tarjan's sets of two or more would miss.
    if (e.from === e.to) continue;
    if (roomOf(e.from) !== roomOf(e.to) || roomOf(e.from) === "entry") continue;
    if (!graph.has(e.from)) graph.set(e.from, new Set());
    graph.get(e.from)!.add(e.to);
  }
  const selfImports = edges.filter((e) => e.from === e.to).map((e) => `${e.from} → itself`);
  assert(graph.has("login/authenticate.ts"), "the login room's imports were not read");
  const found = circles(graph).map((members) => {
    const inside = edges.filter((e) => members.includes(e.from) && members.includes(e.to));
    return `${members.join(" ⇄ ")}: ${inside.map((e) => `${e.from} → ${e.to}`).join("; ")}`;
  });
  assertEquals(
    [...selfImports, ...found],
    [],
    "files of one room (or of the core) import each other in a circle",
  );
});
