// The import graph of a source folder, read from its files' import statements, and its circles: what the
// layout tests (tests/registry/layout_test.ts) check a folder's structure with.

/** Every .ts file under `root`, as a path relative to it. */
export async function sources(root: URL, prefix = ""): Promise<string[]> {
  const out: string[] = [];
  for await (const e of Deno.readDir(root)) {
    if (e.isDirectory) out.push(...await sources(new URL(`${e.name}/`, root), `${prefix}${e.name}/`));
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

export interface Edge {
  /** The importing file, relative to the root. */
  from: string;
  /** The imported file: relative to the root when inside it, else its full URL. */
  to: string;
  inside: boolean;
}

/** Every relative import of every file under `root`. */
export async function importEdges(root: URL): Promise<Edge[]> {
  const edges: Edge[] = [];
  for (const file of await sources(root)) {
    const text = await Deno.readTextFile(new URL(file, root));
    for (const spec of importSpecifiers(text)) {
      const url = new URL(spec, new URL(file, root)).href;
      const inside = url.startsWith(root.href);
      edges.push({ from: file, to: inside ? url.slice(root.href.length) : url, inside });
    }
  }
  return edges;
}

/** Strongly connected sets of more than one node (Tarjan), each sorted. */
export function circles(graph: Map<string, Set<string>>): string[][] {
  let next = 0;
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const onStack = new Set<string>();
  const found: string[][] = [];
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
      if (members.length > 1) found.push(members.sort());
    }
  };
  for (const v of graph.keys()) if (!index.has(v)) visit(v);
  return found;
}

/** The graph of `edges` after naming each end with `group` (edges within one group dropped). */
export function groupGraph(edges: Edge[], group: (file: string) => string): Map<string, Set<string>> {
  const graph = new Map<string, Set<string>>();
  for (const e of edges) {
    if (!e.inside) continue;
    const [a, b] = [group(e.from), group(e.to)];
    if (a === b) continue;
    if (!graph.has(a)) graph.set(a, new Set());
    graph.get(a)!.add(b);
  }
  return graph;
}
