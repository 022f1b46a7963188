// fast-check generators for hostile requests to the auth-method and events families: traversal and encoding
// tricks in path segments, malformed/huge/deep bodies, wrongly typed fields, and bad query parameters.

import fc from "fast-check";
import { assert } from "../helpers/assert.ts";
import { runs, seed, send } from "./check.ts";
import type { BodyTarget, FieldSpec, FieldType } from "./targets.ts";

/** A name no real file has: after the run, nothing called like this may exist under /tmp or the data dir's parent. */
export const marker = "wharf-hostile-zq7";

/** Segments that resolve as `.`/`..`: they move the request to another route, which must still refuse it. */
export const dotSegments = [".", "..", "%2e", "%2E", "%2e%2e", ".%2e", "%2E.", "%2e%2E"];

/** Segments that can never name a real method, scope, account, user, token, policy, node or job. */
export const hostileSegments = [
  "%2f",
  "%2F",
  "a%2fb",
  `..%2f..%2f..%2f..%2f..%2f${marker}`,
  `%2e%2e%2f%2e%2e%2f%2e%2e%2f%2e%2e%2f%2e%2e%2f${marker}`,
  `..%5c..%5c${marker}`,
  "%00",
  "a%00b",
  `${marker}%00.json`,
  "ampw_1234567890%00",
  "%",
  "%zz",
  "%e2%80%ae",
  "%ff%fe",
  "%F0%9F%92%A9",
  "...",
  "~root",
  "%20",
  "%3Cscript%3E",
  "%22%27",
  "x%3Fq%3D1",
  "x%23y",
  "%24%28id%29",
  "ampw_%2e%2e",
  "amoidc_" + "A".repeat(300),
  "u_" + "9".repeat(5000),
  "%41".repeat(3000),
  "at_" + "x".repeat(20_000),
];

const safeHostile = fc.constantFrom(...hostileSegments);
const anyHostile = fc.constantFrom(...hostileSegments, ...dotSegments);

/** A path from `template` with at least one placeholder (or, anonymous, any segment) replaced by a hostile one. */
export function hostilePath(
  template: string,
  valid: Record<string, string>,
  anonymous: boolean,
): fc.Arbitrary<string> {
  // Split placeholders out of their segment (`{method}:authenticate`) so they can be swapped alone.
  const parts = template.slice(1).split("/");
  const holes = parts.map((p, i) => (/\{\w+\}/.test(p) ? i : -1)).filter((i) => i >= 0);
  const candidates = anonymous ? parts.map((_, i) => i) : holes;
  if (candidates.length === 0) return fc.constant(template);
  const bad = anonymous ? anyHostile : safeHostile;
  return fc.tuple(fc.constantFrom(...candidates), bad).map(([at, value]) =>
    "/" + parts.map((part, i) => {
      const placeholder = /\{(\w+)\}/.exec(part);
      if (i === at) return placeholder ? part.replace(placeholder[0], value) : value;
      return placeholder ? part.replace(placeholder[0], valid[placeholder[1]!] ?? "x") : part;
    }).join("/")
  );
}

/** Any request to `endpoints`: a valid or hostile path, `credentials`, any body, sometimes an odd method. */
export function anyRequest<E extends { template: string; method: string }>(
  endpoints: readonly E[],
  valid: Record<string, string>,
  credentials: fc.Arbitrary<Record<string, string>>,
) {
  return fc.record({
    endpoint: fc.constantFrom(...endpoints),
    hostile: fc.boolean(),
    credentials,
    body: anyBody,
    odd: fc.option(fc.constantFrom("PATCH", "PUT", "OPTIONS", "TRACE", "PROPFIND", "DELETE"), {
      nil: undefined,
    }),
  }).chain((r) =>
    (r.hostile
      ? hostilePath(r.endpoint.template, valid, true)
      : fc.constant(fillPath(r.endpoint.template, valid)))
      .map((path) => ({ ...r, path }))
  );
}

/** A request to one of `endpoints` (each with a placeholder) whose id in the path is hostile, any body. */
export function hostileIdRequest<E extends { template: string; method: string }>(
  endpoints: readonly E[],
  valid: Record<string, string>,
) {
  return fc.constantFrom(...endpoints).chain((endpoint) =>
    fc.record({
      endpoint: fc.constant(endpoint),
      path: hostilePath(endpoint.template, valid, false),
      body: anyBody,
    })
  );
}

/** The template with every placeholder filled from the seeded world. */
export function fillPath(template: string, valid: Record<string, string>): string {
  return template.replace(/\{(\w+)\}/g, (_, name: string) => valid[name] ?? "x");
}

const encoder = new TextEncoder();

/** Deeply nested JSON text (arrays or objects), `depth` levels. */
export function nested(depth: number, kind: "array" | "object"): string {
  return kind === "array"
    ? "[".repeat(depth) + "]".repeat(depth)
    : '{"a":'.repeat(depth) + "1" + "}".repeat(depth);
}

/** Any body at all: JSON values, malformed JSON, NUL/unicode, binary, ≥ 1 MiB, deeply nested. */
export const anyBody: fc.Arbitrary<Uint8Array | undefined> = fc.oneof(
  fc.constant(undefined),
  fc.jsonValue({ maxDepth: 3 }).map((v) => encoder.encode(JSON.stringify(v))),
  fc.string({ maxLength: 100, unit: "binary" }).map((s) => encoder.encode(s)),
  fc.uint8Array({ maxLength: 256 }),
  fc.constantFrom(
    "{",
    '{"name":',
    "[1,2",
    '{"a":1}}',
    "\u0000",
    '{"name":"\u0000"}',
    '{"name":"\\u0000\\ud800"}',
    "\ufeff{}",
    '{"__proto__":{"admin":true}}',
    '{"constructor":{"prototype":{"x":1}}}',
    "null",
    "[]",
    '"str"',
    "1e999",
  ).map((s) => encoder.encode(s)),
  fc.constantFrom(1_100_000, 2_200_000).map((n) => encoder.encode(`{"name":"${"y".repeat(n)}"}`)),
  fc.constantFrom(5_000, 100_000).chain((d) =>
    fc.constantFrom("array" as const, "object" as const).map((k) => encoder.encode(nested(d, k)))
  ),
);

/** Values of a JSON type the field does not accept (a bounded field also gets a 100 KB string). */
export function wrongValue(spec: FieldSpec): fc.Arbitrary<unknown> {
  const byType: Record<FieldType, unknown[]> = {
    string: [7, true, ["x"], { a: "b" }],
    number: ["abc", true, [1], { n: 1 }],
    bool: ["true", 1, [true], { b: true }],
    array: ["x", 3, true, { "0": "x" }],
    object: ["x", 3, true, ["x"]],
    stringMap: ["x", 3, true, ["x"], { k: 5 }, { k: { nested: "x" } }],
    time: [true, ["1h"], { t: 1 }],
  };
  const values = byType[spec.type];
  const wrong = fc.constantFrom(...values);
  if (!spec.bounded) return wrong;
  return fc.oneof(wrong, fc.constant(`big-\u00e9x\u0000${"z".repeat(100 * 1024)}`));
}

/** A copy of `base` with `value` at `path` (arrays and objects on the way are copied, missing ones created). */
export function setPath(base: unknown, path: (string | number)[], value: unknown): unknown {
  if (path.length === 0) return value;
  const [head, ...rest] = path;
  if (typeof head === "number") {
    const list = Array.isArray(base) ? [...base] : [];
    list[head] = setPath(list[head], rest, value);
    return list;
  }
  const obj = base && typeof base === "object" && !Array.isArray(base) ? { ...base as object } : {};
  Object.defineProperty(obj, head!, {
    value: setPath((obj as Record<string, unknown>)[head!], rest, value),
    enumerable: true,
    writable: true,
    configurable: true,
  });
  return obj;
}

const unknownKeys = fc.constantFrom("zzz_unknown", "__proto__", "constructor", "Unknown\u0000Key", "ÿ-ü");

/** A body for `target` wrong in one known field, maybe with unknown members and NUL/unicode noise added. */
export function wrongTypedBody(target: BodyTarget): fc.Arbitrary<{ field: string; text: string }> {
  return fc.constantFrom(...target.fields).chain((spec) =>
    fc.record({
      spec: fc.constant(spec),
      value: wrongValue(spec),
      extra: fc.option(fc.tuple(unknownKeys, fc.jsonValue({ maxDepth: 2 })), { nil: undefined }),
    })
  ).map(({ spec, value, extra }) => {
    let body = setPath(target.base, spec.path, value) as Record<string, unknown>;
    if (extra) body = setPath(body, [extra[0]], extra[1]) as Record<string, unknown>;
    return { field: spec.path.join("."), text: JSON.stringify(body) };
  });
}

/** Hostile query values: empty, huge, NUL, unicode, malformed percent-encoding, negative and huge numbers. */
export const queryValue: fc.Arbitrary<string> = fc.oneof(
  fc.string({ maxLength: 40 }).map(encodeURIComponent),
  fc.constantFrom(
    "",
    "%00",
    "%",
    "%zz",
    "%ff",
    "-1",
    "0",
    "-9223372036854775809",
    "9223372036854775808",
    "99999999999999999999999",
    "1e3",
    "0x10",
    "NaN",
    "%E2%80%AE",
    encodeURIComponent('"name" == "x" and ('),
    encodeURIComponent('"/item/name" matches "(a+)+$"'),
    encodeURIComponent("(".repeat(2000)),
    "a".repeat(50_000),
    encodeURIComponent("*:*:*"),
    encodeURIComponent("Job:web:x"),
    "*",
    "..%2f..%2f" + marker,
    encodeURIComponent("<script>alert(1)</script>"),
    encodeURIComponent('{"message":"<img src=x onerror=alert(1)>"}'),
  ),
);

/** `name=value` pairs over the given parameter names (each may repeat). */
export function hostileQuery(names: string[]): fc.Arbitrary<string> {
  return fc.array(fc.tuple(fc.constantFrom(...names), queryValue), { minLength: 1, maxLength: 4 })
    .map((pairs) => pairs.map(([k, v]) => `${k}=${v}`).join("&"));
}

/**
 * Sends writes whose body has one wrongly typed field (or a 100 KB value) to `targets` with `headers`: each
 * must be refused with 400 (any 4xx where the target fails anyway).
 */
export async function assertWrongTypesRefused(
  url: string,
  targets: readonly BodyTarget[],
  headers: Record<string, string>,
): Promise<void> {
  const request = fc.constantFrom(...targets).chain((target) =>
    wrongTypedBody(target).map((body) => ({ target, body }))
  );
  await fc.assert(
    fc.asyncProperty(request, async ({ target, body }) => {
      const r = await send(url, target.method, target.path, headers, body.text);
      assert(
        r.status === 400 || (target.failsAnyway && r.status >= 400),
        `wrong ${body.field} accepted: ${target.method} ${target.path} ${
          body.text.slice(0, 200)
        } → ${r.status}`,
      );
    }),
    { numRuns: runs * 4, seed },
  );
}
