// Every route of the auth-method and events families (and the server's own), read from routes/*/mod.ts and
// the files they import, as templates; and the auth family's write bodies with the JSON type of each known field.

export interface Endpoint {
  method: string;
  /** `{placeholder}` segments are filled from the seeded world's ids or with hostile segments. */
  template: string;
  /** Long-lived answers (the event stream) that the raw client cannot read to the end. */
  streaming?: boolean;
}

const pair = (methods: string[], template: string): Endpoint[] =>
  methods.map((method) => ({ method, template }));

export const authEndpoints: Endpoint[] = [
  ...pair(["GET", "POST"], "/v1/auth-methods"),
  ...pair(["GET"], "/v1/auth-methods/oidc:authenticate:callback"),
  ...pair(["GET"], "/v1/auth-methods/{oidc}:authenticate:callback"),
  ...pair(["POST"], "/v1/auth-methods/{method}:authenticate"),
  ...pair(["POST"], "/v1/auth-methods/{oidc}:change-state"),
  ...pair(["GET", "PATCH", "DELETE"], "/v1/auth-methods/{method}"),
  ...pair(["GET", "POST"], "/v1/scopes"),
  ...pair(["GET", "PATCH", "DELETE"], "/v1/scopes/{scope}"),
  ...pair(["GET", "POST"], "/v1/accounts"),
  ...pair(["POST"], "/v1/accounts/{account}:set-password"),
  ...pair(["POST"], "/v1/accounts/{account}:change-password"),
  ...pair(["GET", "PATCH", "DELETE"], "/v1/accounts/{account}"),
  ...pair(["GET"], "/v1/users"),
  ...pair(["GET", "PATCH"], "/v1/users/{user}"),
  ...pair(["GET", "POST"], "/v1/managed-groups"),
  ...pair(["GET", "PATCH", "DELETE"], "/v1/managed-groups/{managedgroup}"),
  ...pair(["GET"], "/v1/auth-tokens"),
  ...pair(["GET", "DELETE"], "/v1/auth-tokens/{authtoken}"),
];

export const serverEndpoints: Endpoint[] = [
  ...pair(["GET", "HEAD"], "/health"),
  ...pair(["GET"], "/authentication-complete"),
  ...pair(["GET"], "/authentication-error"),
];

export const eventsEndpoints: Endpoint[] = [
  ...pair(["GET"], "/v1/agent/health"),
  { method: "GET", template: "/v1/event/stream", streaming: true },
  ...pair(["POST", "PUT"], "/v1/event/publish"),
  ...pair(["POST", "PUT"], "/v1/acl/bootstrap"),
  ...pair(["GET"], "/v1/acl/policies"),
  ...pair(["POST", "PUT", "GET", "DELETE"], "/v1/acl/policy/{policy}"),
  ...pair(["POST", "PUT"], "/v1/acl/token"),
  ...pair(["GET"], "/v1/acl/token/self"),
  ...pair(["POST", "PUT"], "/v1/acl/token/onetime"),
  ...pair(["POST", "PUT"], "/v1/acl/token/onetime/exchange"),
  ...pair(["GET"], "/v1/acl/policy/self"),
  ...pair(["GET"], "/v1/metrics"),
  ...pair(["GET"], "/v1/acl/tokens"),
  ...pair(["POST", "PUT", "GET", "DELETE"], "/v1/acl/token/{accessor}"),
  ...pair(["GET"], "/v1/acl/auth-methods"),
  ...pair(["POST", "PUT"], "/v1/acl/auth-method"),
  ...pair(["GET"], "/v1/acl/binding-rules"),
  ...pair(["POST", "PUT"], "/v1/acl/binding-rule"),
  ...pair(["POST", "PUT"], "/v1/acl/login"),
  ...pair(["POST", "PUT"], "/v1/acl/oidc/auth-url"),
  ...pair(["POST", "PUT"], "/v1/acl/oidc/complete-auth"),
  ...pair(["PUT", "POST", "GET"], "/v1/jobs"),
  ...pair(["GET", "DELETE"], "/v1/job/{job}"),
  ...pair(["PUT", "POST"], "/v1/node/register"),
  ...pair(["GET"], "/v1/nodes"),
  ...pair(["PUT", "POST"], "/v1/node/{node}/drain"),
  ...pair(["PUT", "POST"], "/v1/node/{node}/eligibility"),
  ...pair(["PUT", "POST"], "/v1/node/{node}/purge"),
  ...pair(["GET"], "/v1/node/{node}"),
];

/** Methods no route declares for a template (HEAD falls back to GET, so it is never "odd" where GET exists). */
export function oddMethods(template: string, all: readonly Endpoint[]): string[] {
  const declared = new Set(all.filter((e) => e.template === template).map((e) => e.method));
  return ["GET", "POST", "PUT", "PATCH", "DELETE", "OPTIONS", "TRACE", "PROPFIND", "HEAD"].filter((m) =>
    !declared.has(m) && !(m === "HEAD" && declared.has("GET"))
  );
}

/** JSON types a field accepts; `time` = a string or duration whose every non-string/number form is wrong. */
export type FieldType = "string" | "number" | "bool" | "array" | "object" | "stringMap" | "time";

export interface FieldSpec {
  path: (string | number)[];
  type: FieldType;
  /** The field has a documented length or pattern limit, so a 100 KB value must also be refused. */
  bounded?: boolean;
}

/** One write endpoint: a body the server accepts as is, and its fields with their JSON types. */
export interface BodyTarget {
  method: string;
  path: string;
  base: Record<string, unknown>;
  fields: FieldSpec[];
  /** The base body already fails (a wrong password): the answer is checked, not required to be 4xx by type. */
  failsAnyway?: boolean;
  /** Unknown attribute or top-level keys alone must be refused (auth PATCH and attribute maps, D13). */
  strictKeys?: "top" | "attributes";
}

export const f = (type: FieldType, ...path: (string | number)[]): FieldSpec => ({ path, type });
export const bounded = (type: FieldType, ...path: (string | number)[]): FieldSpec => ({
  path,
  type,
  bounded: true,
});
const attrs = (type: FieldType, ...names: string[]) => names.map((n) => f(type, "attributes", n));

export const oidcAttributeFields: FieldSpec[] = [
  ...attrs("string", "issuer", "client_id", "client_secret", "api_url_prefix"),
  ...attrs("number", "max_age"),
  ...attrs(
    "array",
    "signing_algorithms",
    "idp_ca_certs",
    "allowed_audiences",
    "claims_scopes",
    "account_claim_maps",
    "prompts",
  ),
  ...attrs("bool", "disable_discovered_config_validation"),
];

export const ldapAttributeFields: FieldSpec[] = [
  ...attrs("array", "urls", "certificates", "account_attribute_maps"),
  ...attrs("bool", "start_tls", "insecure_tls", "discover_dn", "anon_group_search", "enable_groups"),
  ...attrs("bool", "use_token_groups"),
  ...attrs("string", "upn_domain", "user_dn", "user_filter", "group_dn", "group_filter", "bind_dn"),
  ...attrs("string", "user_attr", "group_attr", "client_certificate", "client_certificate_key"),
  ...attrs("string", "bind_password", "dereference_aliases", "state"),
  ...attrs("number", "maximum_page_size"),
];

const passwordAttributeFields = attrs("number", "min_login_name_length", "min_password_length");
const common = [bounded("string", "name"), bounded("string", "description")];

/** The ids of the seeded world that bodies and paths refer to. */
export interface WorldIds {
  passwordMethod: string;
  oidcMethod: string;
  ldapMethod: string;
  versions: Record<string, number>;
  org: string;
  aliceAccount: string;
  aliceUser: string;
  aliceToken: string;
  ldapGroup: string;
  policy: string;
  clientAccessor: string;
  node: string;
  job: string;
}

export function authBodyTargets(w: WorldIds): BodyTarget[] {
  const v = (id: string) => w.versions[id] ?? 1;
  return [
    {
      method: "POST",
      path: "/v1/auth-methods",
      base: { scope_id: "global", type: "password", name: "fuzz-pw", attributes: { min_password_length: 9 } },
      fields: [f("string", "scope_id"), f("string", "type"), ...common, f("number", "version")]
        .concat(f("object", "attributes"), passwordAttributeFields),
      strictKeys: "attributes",
    },
    {
      method: "POST",
      path: "/v1/auth-methods",
      base: {
        scope_id: "global",
        type: "oidc",
        name: "fuzz-oidc",
        attributes: { client_id: "c", client_secret: "s", api_url_prefix: "https://wharf.example" },
      },
      fields: oidcAttributeFields,
      strictKeys: "attributes",
    },
    {
      method: "POST",
      path: "/v1/auth-methods",
      base: {
        scope_id: "global",
        type: "ldap",
        name: "fuzz-ldap",
        attributes: { urls: ["ldap://127.0.0.1:1"] },
      },
      fields: ldapAttributeFields,
      strictKeys: "attributes",
    },
    {
      method: "PATCH",
      path: `/v1/auth-methods/${w.passwordMethod}`,
      base: { version: v(w.passwordMethod), description: "patched" },
      fields: [...common, f("number", "version"), f("object", "attributes"), ...passwordAttributeFields],
      strictKeys: "top",
    },
    {
      method: "PATCH",
      path: `/v1/auth-methods/${w.oidcMethod}`,
      base: { version: v(w.oidcMethod), description: "patched" },
      fields: oidcAttributeFields,
      strictKeys: "top",
    },
    {
      method: "PATCH",
      path: `/v1/auth-methods/${w.ldapMethod}`,
      base: { version: v(w.ldapMethod), description: "patched" },
      fields: ldapAttributeFields,
      strictKeys: "top",
    },
    {
      method: "POST",
      path: `/v1/auth-methods/${w.oidcMethod}:change-state`,
      base: { version: v(w.oidcMethod), attributes: { state: "inactive" } },
      fields: [f("number", "version"), f("object", "attributes"), ...attrs("string", "state")]
        .concat(attrs("bool", "disable_discovered_config_validation")),
    },
    {
      method: "POST",
      path: `/v1/auth-methods/${w.passwordMethod}:authenticate`,
      base: { command: "login", attributes: { login_name: "nobody", password: "not-the-password" } },
      fields: [
        f("string", "command"),
        f("string", "type"),
        f("string", "token_type"),
        f("object", "attributes"),
      ]
        .concat(attrs("string", "login_name", "password")),
      failsAnyway: true,
    },
    {
      method: "POST",
      path: `/v1/auth-methods/${w.ldapMethod}:authenticate`,
      base: { attributes: { login_name: "nobody", password: "not-the-password" } },
      fields: [
        f("string", "command"),
        f("object", "attributes"),
        ...attrs("string", "login_name", "password"),
      ],
      failsAnyway: true,
    },
    {
      method: "POST",
      path: `/v1/auth-methods/${w.oidcMethod}:authenticate`,
      base: { command: "token", attributes: { token_id: "not-a-token-id" } },
      fields: [f("string", "command"), f("object", "attributes"), ...attrs("string", "token_id")],
      failsAnyway: true,
    },
    {
      method: "POST",
      path: `/v1/auth-methods/${w.oidcMethod}:authenticate`,
      base: { command: "callback", attributes: { code: "c", state: "s" } },
      fields: [...attrs("string", "code", "state", "error", "error_description")],
      failsAnyway: true,
    },
    {
      method: "POST",
      path: `/v1/auth-methods/${w.oidcMethod}:authenticate`,
      base: { command: "start", attributes: { roundtrip_payload: { a: 1 } } },
      fields: [f("string", "command"), f("object", "attributes"), ...attrs("object", "roundtrip_payload")],
      failsAnyway: true,
    },
    {
      method: "POST",
      path: "/v1/scopes",
      base: { scope_id: "global", name: "fuzz-org" },
      fields: [f("string", "scope_id"), ...common, f("number", "version")],
    },
    {
      method: "PATCH",
      path: `/v1/scopes/${w.org}`,
      base: { version: v(w.org), description: "patched" },
      fields: [...common, f("number", "version"), f("string", "primary_auth_method_id")],
      strictKeys: "top",
    },
    {
      method: "POST",
      path: "/v1/accounts",
      base: {
        auth_method_id: w.passwordMethod,
        attributes: { login_name: "fuzzacct", password: "fuzz-password-1" },
      },
      fields: [f("string", "auth_method_id"), ...common, f("string", "type"), f("object", "attributes")]
        .concat(bounded("string", "attributes", "login_name"), f("string", "attributes", "password")),
      strictKeys: "attributes",
    },
    {
      method: "PATCH",
      path: `/v1/accounts/${w.aliceAccount}`,
      base: { version: v(w.aliceAccount), description: "patched" },
      fields: [...common, f("number", "version"), bounded("string", "attributes", "login_name")],
      strictKeys: "top",
    },
    {
      method: "POST",
      path: `/v1/accounts/${w.aliceAccount}:set-password`,
      base: { version: v(w.aliceAccount), password: "fuzz-password-2" },
      fields: [f("number", "version"), f("string", "password")],
    },
    {
      method: "POST",
      path: `/v1/accounts/${w.aliceAccount}:change-password`,
      base: {
        version: v(w.aliceAccount),
        current_password: "alice-password-1",
        new_password: "fuzz-password-3",
      },
      fields: [f("number", "version"), f("string", "current_password"), f("string", "new_password")],
    },
    {
      method: "POST",
      path: "/v1/managed-groups",
      base: { auth_method_id: w.ldapMethod, attributes: { group_names: ["fuzz-group"] } },
      fields: [f("string", "auth_method_id"), ...common, f("string", "type"), f("object", "attributes")]
        .concat(f("array", "attributes", "group_names")),
      strictKeys: "attributes",
    },
    {
      method: "PATCH",
      path: `/v1/managed-groups/${w.ldapGroup}`,
      base: { version: v(w.ldapGroup), description: "patched" },
      fields: [...common, f("number", "version"), f("array", "attributes", "group_names")],
      strictKeys: "top",
    },
    {
      method: "PATCH",
      path: `/v1/users/${w.aliceUser}`,
      base: { version: v(w.aliceUser), description: "patched" },
      fields: [...common, f("number", "version"), f("bool", "admin")],
      strictKeys: "top",
    },
  ];
}
