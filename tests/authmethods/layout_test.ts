// The shape of routes/authmethods/ (issues #17, #23): a shared core of top-level files, rooms in subfolders,
// no import circle between rooms, and none between files inside a room or the core. Read from the source's
// import statements, so the structure stays.
//
//   mod.ts             the entry: the route table that wires the rooms together (may import anything)
//   other top-level    the core: imports only the core (and lib/), never a room or mod.ts
//   <room>/**          a room: imports the core and rooms below it, never one that imports it back

import { assert, assertEquals } from "../helpers/assert.ts";

const root = new URL("../../routes/authmethods/", import.meta.url);
const entry = "mod.ts";

/** Every .ts file under the family's folder, as a path relative to it. */
async function sources(dir = root, prefix = ""): Promise<string[]> {
  const out: string[] = [];
  for await (const e of Deno.readDir(dir)) {
    if (e.isDirectory) out.push(...await sources(new URL(`${e.name}/`, dir), `${prefix}${e.name}/`));
    else if (e.isFile && e.name.endsWith(".ts")) out.push(`${prefix}${e.name}`);
  }
  return out.sort();
}

/** Relative specifiers of static imports and re-exports (type-only ones included), and of dynamic imports. */
export function importSpecifiers(source: string): string[] {
  const found: string[] = [];
  const statement = /(?:^|[\n;])\s*(?:import|export)\b[^;"'`]*?\bfrom\s*["']([^"']+)["']/g;
  const bare = /(?:^|[\n;])\s*import\s*["']([^"']+)["']/g;
  const dynamic = /\bimport\s*\(\s*["']([^"']+)["']\s*\)/g;
  for (const re of [statement, bare, dynamic]) {
    for (const m of source.matchAll(re)) {
      const spec = m[1] ?? "";
      if (spec.startsWith(".")) found.push(spec);
    }
  }
  return found;
}

/** "entry", "core", or the room (first folder) a file belongs to. */
function roomOf(path: string): string {
  if (path === entry) return "entry";
  const slash = path.indexOf("/");
  return slash < 0 ? "core" : path.slice(0, slash);
}

/** The file a specifier names, relative to the family's folder, or undefined when it lies outside. */
function resolve(from: string, specifier: string): string | undefined {
  const url = new URL(specifier, new URL(from, root));
  return url.href.startsWith(root.href) ? url.href.slice(root.href.length) : undefined;
}

interface Edge {
  from: string;
  to: string;
}

async function imports(): Promise<Edge[]> {
  const edges: Edge[] = [];
  for (const file of await sources()) {
    const text = await Deno.readTextFile(new URL(file, root));
    for (const spec of importSpecifiers(text)) {
      const to = resolve(file, spec);
      if (to !== undefined) edges.push({ from: file, to });
    }
  }
  return edges;
}

/** Strongly connected sets (of rooms, or of files) with more than one member (Tarjan), each sorted. */
function cycles(graph: Map<string, Set<string>>): string[][] {
  let next = 0;
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const onStack = new Set<string>();
  const cycles: string[][] = [];
  const visit = (v: string) => {
    index.set(v, next);
    low.set(v, next++);
    stack.push(v);
    onStack.add(v);
    for (const w of graph.get(v) ?? []) {
      if (!index.has(w)) {
        visit(w);
        low.set(v, Math.min(low.get(v)!, low.get(w)!));
      } else if (onStack.has(w)) low.set(v, Math.min(low.get(v)!, index.get(w)!));
    }
    if (low.get(v) === index.get(v)) {
      const members: string[] = [];
      let w: string;
      do {
        w = stack.pop()!;
        onStack.delete(w);
        members.push(w);
      } while (w !== v);
      if (members.length > 1) cycles.push(members.sort());
    }
  };
  for (const v of graph.keys()) if (!index.has(v)) visit(v);
  return cycles;
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
  const circles = cycles(graph).map((members) => {
    const inside = [...why.values()].filter((w) => members.includes(w.a) && members.includes(w.b));
    return `${members.join(" ⇄ ")}: ${inside.map((w) => `${w.a}→${w.b} (${w.file})`).join("; ")}`;
  });
  assertEquals(circles, [], "rooms import each other in a circle");
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
  const circles = cycles(graph).map((members) => {
    const inside = edges.filter((e) => members.includes(e.from) && members.includes(e.to));
    return `${members.join(" ⇄ ")}: ${inside.map((e) => `${e.from} → ${e.to}`).join("; ")}`;
  });
  assertEquals(
    [...selfImports, ...circles],
    [],
    "files of one room (or of the core) import each other in a circle",
  );
});
