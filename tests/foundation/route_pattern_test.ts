// Compiled route patterns (lib/route_pattern.ts) against URLPattern, for every route of the app and generated paths.

import fc from "fast-check";
import { assert, assertEquals } from "../helpers/assert.ts";
import { compilePathPattern } from "../../lib/route_pattern.ts";
import { startTestServer } from "../helpers/server.ts";

/** A path that fits `template`, with random segment values, or a random mutation of it. */
function pathFor(template: string, values: string[], mutate: number): string {
  let n = 0;
  let path = template
    .replace(/\{\/\*\}\?/g, values[0]!.length % 2 ? `/${values[0]}` : "")
    .replace(/:([A-Za-z_$][A-Za-z0-9_$]*)(\([^)]*\))?/g, () => values[n++ % values.length]!)
    .replace(/\\(.)/g, "$1");
  if (mutate === 1) path += "/extra";
  if (mutate === 2) path = path.replace(/\/[^/]*$/, "");
  if (mutate === 3) path = path.toUpperCase();
  return path;
}

const segment = fc.oneof(
  fc.stringMatching(/^[A-Za-z0-9_.~-]{1,12}$/),
  fc.constantFrom("a:b", "x.box", "%2F", "%2e%2e", "self", "ampw_1234567890", "oidc:authenticate", "v1.0.0"),
);

Deno.test("compiled route patterns match exactly what URLPattern matches, for every route of the app", async () => {
  const srv = await startTestServer({ WHARF_TEST_ROUTES: "1" });
  try {
    const templates = [...new Set(srv.server.routes.map((r) => r.path))];
    assert(templates.length > 50, `expected the full route table, got ${templates.length}`);
    const compiled = templates.filter((t) => compilePathPattern(t) !== undefined);
    assert(compiled.length >= templates.length - 3, "nearly every route compiles to a RegExp");
    let matched = 0;
    fc.assert(
      fc.property(
        fc.constantFrom(...templates),
        fc.constantFrom(...templates),
        fc.array(segment, { minLength: 1, maxLength: 6 }),
        fc.integer({ min: 0, max: 3 }),
        fc.boolean(),
        (template, other, values, mutate, own) => {
          const source = own ? template : other;
          const regex = compilePathPattern(template);
          if (!regex) return;
          const pattern = new URLPattern({ pathname: template });
          // As the router sees it: parsed by URL (dot segments resolved) and with runs of "/" collapsed.
          const path = new URL(pathFor(source, values, mutate), "http://x").pathname.replace(/\/{2,}/g, "/");
          const expected = pattern.exec({ pathname: path })?.pathname.groups;
          const m = regex.exec(path);
          const actual = m ? { ...(m.groups ?? {}) } : undefined;
          assertEquals(actual, expected ? { ...expected } : undefined, `${template} on ${path}`);
          if (expected) matched++;
        },
      ),
      { numRuns: 3000, seed: 42 },
    );
    assert(matched > 200, `enough generated paths match their route (${matched})`);
  } finally {
    await srv.stop();
  }
});

Deno.test("unsupported pattern syntax is left to URLPattern", () => {
  for (const p of ["/files/*", "/a/:id?", "/a/(\\d+)", "/a{/b"]) {
    assertEquals(compilePathPattern(p), undefined, p);
  }
  assertEquals(
    compilePathPattern("/v1/auth-methods/:id([^/:]+)\\:authenticate")?.exec(
      "/v1/auth-methods/ampw_1:authenticate",
    )?.groups?.id,
    "ampw_1",
  );
});
