// fast-check generators for hostile registry requests: every endpoint of docs/registry.md and its /api/v2 twin
// (docs/registry.md#how-vagrant-23-and-24-see-the-same-box), path segments with traversal and encoding tricks,
// malformed or wrongly typed bodies that no correct server may accept.

import fc from "fast-check";

/** Placeholders in endpoint templates and the real values the seeded registry has for them. */
export const validValues: Record<string, string[]> = {
  user: ["acme", "alice"],
  box: ["devbox", "public-box"],
  version: ["1.0.0", "1.1.0", "0.1.0"],
  provider: ["virtualbox", "libvirt"],
  arch: ["amd64", "arm64", "unknown"],
  name: ["alice", "bob", "acme", "admin"],
  id: ["AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA"],
  hash: ["0".repeat(64)],
  client: ["sp_AAAAAAAAAAAAAAAAAAAAAAAA"],
};

export interface Endpoint {
  method: string;
  /** Path template: `{placeholder}` segments are filled from validValues or hostile segments. */
  template: string;
}

const B = "api/v1/box/{user}/{box}";
const V = `${B}/version/{version}`;
const P = `${V}/provider/{provider}`;

export const endpoints: Endpoint[] = [
  ...["POST", "GET", "DELETE"].map((method) => ({ method, template: "api/v1/authenticate" })),
  { method: "POST", template: "api/v1/two-factor/request-code" },
  { method: "GET", template: "api/v1/user/{user}" },
  { method: "GET", template: "api/v1/search" },
  { method: "POST", template: "api/v1/boxes" },
  ...["GET", "PUT", "DELETE"].map((method) => ({ method, template: B })),
  { method: "POST", template: `${B}/versions` },
  ...["GET", "PUT", "DELETE"].map((method) => ({ method, template: V })),
  { method: "PUT", template: `${V}/release` },
  { method: "PUT", template: `${V}/revoke` },
  { method: "POST", template: `${V}/providers` },
  ...["GET", "PUT", "DELETE"].map((method) => ({ method, template: P })),
  { method: "GET", template: `${P}/upload` },
  { method: "GET", template: `${P}/upload/direct` },
  { method: "PUT", template: `${P}/upload/direct/{id}` },
  { method: "PUT", template: "api/v1/uploads/{id}" },
  ...["GET", "HEAD"].map((method) => ({ method, template: "{user}/{box}" })),
  ...["GET", "HEAD"].map((method) => ({
    method,
    template: "{user}/boxes/{box}/versions/{version}/providers/{provider}.box",
  })),
  ...["GET", "POST"].map((method) => ({ method, template: "api/v1/admin/users" })),
  ...["GET", "PUT", "DELETE"].map((method) => ({ method, template: "api/v1/admin/users/{name}" })),
  ...["POST", "DELETE"].map((method) => ({ method, template: "api/v1/admin/users/{name}/totp" })),
  { method: "POST", template: "api/v1/admin/users/{name}/totp/confirm" },
  { method: "GET", template: "api/v1/admin/users/{name}/tokens" },
  { method: "DELETE", template: "api/v1/admin/users/{name}/tokens/{hash}" },
  ...["GET", "POST"].map((method) => ({ method, template: "api/v1/admin/organizations" })),
  ...["GET", "PUT", "DELETE"].map((method) => ({ method, template: "api/v1/admin/organizations/{name}" })),
  ...["PUT", "DELETE"].map((method) => ({
    method,
    template: "api/v1/admin/organizations/{name}/members/{name}",
  })),
  ...["GET", "PUT"].map((method) => ({ method, template: "api/v1/admin/maintenance" })),
  ...["GET", "POST"].map((method) => ({
    method,
    template: "api/v1/admin/organizations/{name}/service-principals",
  })),
  { method: "DELETE", template: "api/v1/admin/organizations/{name}/service-principals/{client}" },
  // The identity routes (docs/identity.md): v2 only.
  ...["GET", "PUT"].map((method) => ({ method, template: "api/v2/admin/sign-in-methods" })),
  ...["GET", "PUT", "DELETE"].map((method) => ({ method, template: "api/v2/admin/users/{name}/identity" })),
  ...["GET", "PUT"].map((method) => ({ method, template: "api/v2/admin/group-bindings" })),
  ...["GET", "POST"].map((method) => ({ method, template: "api/v2/organization/{name}/group-bindings" })),
  { method: "DELETE", template: "api/v2/organization/{name}/group-bindings/{id}" },
  { method: "GET", template: "api/v2/organization/{name}/members" },
];

/** v1 template → its /api/v2 twin: provider paths gain the architecture (docs/registry.md#vagrant-24). */
function v2Template(template: string): string {
  return template.replace(/^api\/v1\//, "api/v2/").replace(
    /\/provider\/\{provider\}/,
    "/provider/{provider}/{arch}",
  );
}

endpoints.push(
  ...endpoints.filter((e) => e.template.startsWith("api/v1/")).map((e) => ({
    method: e.method,
    template: v2Template(e.template),
  })),
  ...["GET", "HEAD"].flatMap((method) => [
    { method, template: "api/v2/vagrant/{user}/{box}" },
    { method, template: "{user}/boxes/{box}/versions/{version}/providers/{provider}/{arch}/vagrant.box" },
  ]),
);

/** Segments that resolve as `.`/`..` (URL dot segments): they change the route, so they are never "safe". */
export const dotSegments = [".", "..", "%2e", "%2E", "%2e%2e", ".%2e", "%2E.", "%2e%2E"];

/** Segments that can never name a real user, box, version, provider, upload id or token hash. */
export const hostileSegments = [
  "%2f",
  "%2F",
  "a%2fb",
  "..%2f..%2f..%2fetc%2fpasswd",
  "%2e%2e%2f%2e%2e%2fetc",
  "..%5c..%5cwindows",
  "%00",
  "a%00b",
  "%00.json",
  "devbox%00",
  "%",
  "%zz",
  "%e2%80%ae",
  "%ff%fe",
  "...",
  "....",
  "~root",
  "%20",
  "%3Cscript%3E",
  "%22%27",
  "name%3Fq%3D1",
  "x%23y",
  "%24%28id%29",
  "-leading-dash",
  "_leading_underscore",
  "a".repeat(300),
  "9".repeat(5000),
  "%41".repeat(2000),
];

const safeHostile = fc.constantFrom(...hostileSegments);
const anyHostile = fc.constantFrom(...hostileSegments, ...dotSegments);

/**
 * A path from a template where at least one segment is hostile. `anonymous` (no valid token) also allows
 * dot segments and replacing a literal segment (`api`, `box`, `versions`…); a token holder's paths only
 * get hostile placeholders, so no hostile path can resolve to a real route and write something.
 */
export function hostilePath(template: string, anonymous: boolean): fc.Arbitrary<string> {
  const parts = template.split("/");
  const holes = parts.map((p, i) => (/\{\w+\}/.test(p) ? i : -1)).filter((i) => i >= 0);
  const candidates = anonymous ? parts.map((_, i) => i) : holes;
  if (candidates.length === 0) return fc.constant("/" + template);
  const bad = anonymous ? anyHostile : safeHostile;
  return fc.tuple(
    fc.constantFrom(...candidates),
    fc.array(fc.boolean(), { minLength: parts.length, maxLength: parts.length }),
    fc.array(bad, { minLength: parts.length, maxLength: parts.length }),
    fc.array(fc.nat(), { minLength: parts.length, maxLength: parts.length }),
  ).map(([forced, hostileAt, badValues, picks]) =>
    "/" + parts.map((part, i) => {
      const placeholder = /\{(\w+)\}/.exec(part);
      if (!placeholder) return i === forced ? badValues[i]! : part;
      const useBad = i === forced || hostileAt[i];
      const value = useBad ? badValues[i]! : pickValid(placeholder[1]!, picks[i]!);
      return part.replace(placeholder[0], value);
    }).join("/")
  );
}

/** A path from a template with every placeholder valid (existing or at least well-formed names). */
export function validPath(template: string): fc.Arbitrary<string> {
  const parts = template.split("/");
  return fc.array(fc.nat(), { minLength: parts.length, maxLength: parts.length }).map((picks) =>
    "/" + parts.map((part, i) => {
      const placeholder = /\{(\w+)\}/.exec(part);
      return placeholder ? part.replace(placeholder[0], pickValid(placeholder[1]!, picks[i]!)) : part;
    }).join("/")
  );
}

function pickValid(kind: string, pick: number): string {
  const values = validValues[kind] ?? ["x"];
  return values[pick % values.length]!;
}

const encoder = new TextEncoder();

/** Any body at all: JSON values, malformed JSON, binary, huge. */
export const anyBody: fc.Arbitrary<Uint8Array | undefined> = fc.oneof(
  fc.constant(undefined),
  fc.jsonValue({ maxDepth: 4 }).map((v) => encoder.encode(JSON.stringify(v))),
  fc.string({ maxLength: 200 }).map((s) => encoder.encode(s)),
  fc.uint8Array({ maxLength: 512 }),
  fc.constantFrom("{", '{"box":', "[1,2", '{"a":1}}', "\u0000", "nul\u0000l", '{"box":{"name":"x"}').map((
    s,
  ) => encoder.encode(s)),
  fc.integer({ min: 1, max: 3 }).map((n) => encoder.encode(`{"x":"${"y".repeat(n * 700_000)}"}`)),
  fc.integer({ min: 2000, max: 5000 }).map((depth) => encoder.encode("[".repeat(depth) + "]".repeat(depth))),
);

/** Values of the wrong JSON type for a string field (never numbers: a lenient server could stringify them). */
const notAString = fc.oneof(
  fc.boolean(),
  fc.array(fc.string({ maxLength: 5 }), { maxLength: 3 }),
  fc.dictionary(fc.string({ maxLength: 5 }), fc.string({ maxLength: 5 }), { maxKeys: 2 }),
);
/** Values no server may read as a boolean. */
const notABoolean = fc.oneof(
  fc.array(fc.boolean(), { maxLength: 2 }),
  fc.dictionary(fc.string({ maxLength: 3 }), fc.boolean(), { maxKeys: 2 }),
  fc.constantFrom(7, -3, 2.5, "maybe", "sometimes"),
);

type FieldRule = { field: string; bad: fc.Arbitrary<unknown> };

/** Per write endpoint: the resource wrapper name and fields with values that must be rejected (422/400). */
const invalidFields: Record<string, { wrapper: string; rules: FieldRule[] }> = {
  box: {
    wrapper: "box",
    rules: [
      {
        field: "name",
        bad: fc.oneof(notAString, fc.constantFrom("a".repeat(101), "..", ".", "bad name", "-x")),
      },
      { field: "short_description", bad: fc.oneof(notAString, fc.constant("s".repeat(256))) },
      { field: "description", bad: fc.oneof(notAString, fc.constant("d".repeat(70 * 1024))) },
      { field: "is_private", bad: notABoolean },
      { field: "username", bad: notAString },
    ],
  },
  version: {
    wrapper: "version",
    rules: [
      // Never an object: a bare body's object-valued "version" member is read as the wrapped payload.
      {
        field: "version",
        bad: fc.oneof(
          fc.boolean(),
          fc.array(fc.string({ maxLength: 5 }), { maxLength: 3 }),
          fc.constantFrom("v1.0", "1.0.0/..", "1." + "0".repeat(70), ""),
        ),
      },
      { field: "description", bad: fc.oneof(notAString, fc.constant("d".repeat(70 * 1024))) },
    ],
  },
  provider: {
    wrapper: "provider",
    rules: [
      { field: "name", bad: fc.oneof(notAString, fc.constantFrom("VirtualBox", "a".repeat(65), "../x", "")) },
      {
        field: "url",
        bad: fc.oneof(
          notAString,
          fc.constantFrom("file:///etc/passwd", "ftp://x/y", "not a url", "https://e.x/" + "a".repeat(2100)),
        ),
      },
      { field: "checksum_type", bad: fc.oneof(notAString, fc.constantFrom("sha999", "crc32", "SHA-256")) },
      {
        field: "checksum",
        bad: fc.oneof(notAString, fc.constantFrom("xyz", "0".repeat(63), "g".repeat(64))),
      },
    ],
  },
};

/** v2 provider bodies: v1's rules plus the architecture fields, which only v2 reads. */
invalidFields.provider2 = {
  wrapper: "provider",
  rules: [
    ...invalidFields.provider!.rules,
    {
      field: "architecture",
      bad: fc.oneof(
        notAString,
        fc.constantFrom("x86_64", "AMD64", "", "arm64 ", "../amd64", "a".repeat(300)),
      ),
    },
    { field: "default_architecture", bad: notABoolean },
  ],
};

/** A body for a create/update of `resource` that is wrong in at least one field (or not JSON at all). */
export function invalidBody(
  resource: "box" | "version" | "provider" | "provider2",
): fc.Arbitrary<Uint8Array> {
  const { wrapper, rules } = invalidFields[resource]!;
  const wrongFields = fc.uniqueArray(fc.constantFrom(...rules), { minLength: 1, maxLength: rules.length })
    .chain((chosen) =>
      fc.tuple(...chosen.map((rule) => rule.bad.map((value) => [rule.field, value] as const)))
    )
    .map((pairs) => Object.fromEntries(pairs));
  const notJsonObject = fc.oneof(
    fc.constantFrom("{", "[]", "42", '"box"', "true", "null", '{"box":{"name":', "\u0000{}"),
    fc.array(fc.jsonValue({ maxDepth: 2 }), { maxLength: 3 }).map((a) => JSON.stringify(a)),
  );
  return fc.oneof(
    wrongFields.map((fields) => encoder.encode(JSON.stringify(fields))),
    wrongFields.map((fields) => encoder.encode(JSON.stringify({ [wrapper]: fields }))),
    notJsonObject.map((text) => encoder.encode(text)),
    fc.constant(encoder.encode(`{"${wrapper}":{"description":"${"z".repeat(1_100_000)}"}}`)),
  );
}

/** Headers carrying no valid credentials in every form the registry reads (docs/registry.md#getting-a-token). */
export const badCredentials: fc.Arbitrary<{ headers: Record<string, string>; query: string }> = fc.oneof(
  fc.constant({ headers: {}, query: "" }),
  fc.constant({ headers: { Authorization: "Bearer wharf_" + "A".repeat(43) }, query: "" }),
  fc.constant({ headers: { Authorization: "Bearer " + "x".repeat(4000) }, query: "" }),
  fc.constant({ headers: { Authorization: "Basic YWRtaW46YWRtaW4=" }, query: "" }),
  fc.constant({ headers: { "X-Atlas-Token": "%00../../" }, query: "" }),
  fc.constant({ headers: { "X-Service-Token": "wharf_nope" }, query: "" }),
  fc.constant({ headers: {}, query: "access_token=%00%2e%2e%2f" }),
);
