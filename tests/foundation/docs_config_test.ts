// The configuration docs match the code: every WHARF_* variable lib/, routes/, cli/, main.ts and app.ts name
// has a table row (its default and meaning) in README.md or a docs/ page README links, and every variable the
// docs name is read by the code or by the tests (WHARF_TEST_*, the hostile suite's seeds) that document it.

import { assertEquals } from "../helpers/assert.ts";
import { sources } from "../helpers/import_graph.ts";

const repo = new URL("../../", import.meta.url);
// A name ending in "_" (as in `WHARF_LOGIN_LOCKOUT_*`) names a family of variables by its prefix.
const variable = /WHARF_[A-Z0-9_]+/g;

/** `root` (a repository path) if it is a file, else every file under it whose name ends in `.ts`. */
async function typeScriptFiles(root: string): Promise<string[]> {
  if ((await Deno.stat(new URL(root, repo))).isFile) return [root];
  return await sources(new URL(`${root}/`, repo), `${root}/`);
}

/** The WHARF_* names the files under `roots` mention. */
async function namesIn(roots: string[], skip: (path: string) => boolean = () => false): Promise<Set<string>> {
  const names = new Set<string>();
  for (const root of roots) {
    for (const path of await typeScriptFiles(root)) {
      if (skip(path)) continue;
      for (const [name] of (await Deno.readTextFile(new URL(path, repo))).matchAll(variable)) names.add(name);
    }
  }
  return names;
}

/** README.md and the docs/ pages it links to (directly). */
async function documentation(): Promise<Map<string, string>> {
  const readme = await Deno.readTextFile(new URL("README.md", repo));
  const pages = new Map([["README.md", readme]]);
  for (const [, page] of readme.matchAll(/\]\((docs\/[a-z0-9_-]+\.md)(?:#[^)]*)?\)/g)) {
    if (page && !pages.has(page)) pages.set(page, await Deno.readTextFile(new URL(page, repo)));
  }
  return pages;
}

/** Names with a table row ("| `WHARF_…` | default | meaning |") in one of the pages. */
function tabled(pages: Map<string, string>): Set<string> {
  const names = new Set<string>();
  for (const text of pages.values()) {
    for (const line of text.split("\n")) {
      if (!line.startsWith("|")) continue;
      for (const [name] of line.matchAll(variable)) names.add(name);
    }
  }
  return names;
}

const isTest = (path: string) => path.endsWith("_test.ts");

Deno.test("every WHARF_* variable the code reads has a row in README or a docs page it links", async () => {
  const code = await namesIn(["lib", "routes", "cli", "main.ts", "app.ts"], isTest);
  const documented = tabled(await documentation());
  const missing = [...code].filter((name) => !name.startsWith("WHARF_TEST_") && !documented.has(name));
  assertEquals(missing.sort(), []);
});

Deno.test("every WHARF_* variable the docs name is read by the code or the tests", async () => {
  const thisFile = "tests/foundation/docs_config_test.ts";
  const read = [
    ...await namesIn(
      ["lib", "routes", "cli", "main.ts", "app.ts", "tests", "bench"],
      (path) => path === thisFile,
    ),
  ];
  const pages = await documentation();
  for (const page of ["routes/registry/README.md", "routes/authmethods/README.md"]) {
    pages.set(page, await Deno.readTextFile(new URL(page, repo)));
  }
  for await (const entry of Deno.readDir(new URL("docs/", repo))) {
    const page = `docs/${entry.name}`;
    if (entry.name.endsWith(".md") && !pages.has(page)) {
      pages.set(page, await Deno.readTextFile(new URL(page, repo)));
    }
  }
  const unknown = new Set<string>();
  for (const [page, text] of pages) {
    for (const [name] of text.matchAll(variable)) {
      const known = name.endsWith("_") ? read.some((r) => r.startsWith(name)) : read.includes(name);
      if (!known) unknown.add(`${page}: ${name}`);
    }
  }
  assertEquals([...unknown].sort(), []);
});
