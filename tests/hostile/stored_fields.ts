// Every field a user can set, family by family, as a write that stores a given string there (through the API
// or a console form) and a read that gives the stored value back; and every GET route that can show it.

import type { StoredWorld } from "./stored_world.ts";
import { probe } from "./stored_strings.ts";
import type { RawResponse } from "../registry_fuzz/raw_http.ts";
import { WebClient } from "../console/helpers.ts";
import { BOB_PASSWORD } from "../registry_clients/registry_api.ts";

export type FieldFamily = "registry" | "console" | "auth" | "events";

export interface StoredField {
  family: FieldFamily;
  name: string;
  /** A URL field: the generator puts the hostile part inside a URL. */
  url?: boolean;
  /** Stores `value`; the answer (already checked by probe). */
  write(w: StoredWorld, value: string): Promise<RawResponse>;
  /** Requests the routes whose answer headers carry the stored value (each answer checked by probe). */
  inHeaders?(w: StoredWorld): Promise<unknown>;
  /** After an accepted write, what the API shows in the field now. */
  stored?(w: StoredWorld): Promise<unknown>;
}

const json = (r: RawResponse) => JSON.parse(r.text);

/** Request headers per caller. */
export const as = {
  alice: (w: StoredWorld) => ({ Authorization: `Bearer ${w.seeded.aliceToken}`, Accept: "application/json" }),
  admin: (w: StoredWorld) => ({ Authorization: `Bearer ${w.seeded.adminToken}`, Accept: "application/json" }),
  aliceWeb: (w: StoredWorld) => ({ Cookie: w.aliceWeb.cookieHeader(), Accept: "text/html" }),
  adminWeb: (w: StoredWorld) => ({ Cookie: w.adminWeb.cookieHeader(), Accept: "text/html" }),
  auth: (w: StoredWorld) => ({ Authorization: `Bearer ${w.authAdmin.token}` }),
  nomad: (w: StoredWorld) => ({ "X-Nomad-Token": w.management }),
};

async function getJson(w: StoredWorld, path: string, headers: Record<string, string>) {
  const r = await probe(w, "GET", path, headers);
  if (r.status !== 200) throw new Error(`GET ${path} → ${r.status} ${r.text.slice(0, 200)}`);
  return json(r);
}

const BOX = "/api/v1/box/acme/devbox";
const WIP = `${BOX}/version/1.1.0`;
const PUBLIC_PROVIDER = "/api/v1/box/alice/public-box/version/0.1.0/provider/virtualbox";

/** Where a write goes: a path, or one made from the world and the value. */
type WritePath = string | ((w: StoredWorld, v: string) => string);

/** A JSON write with `headers` (a caller of `as`): `body(v, w)` to `path`. */
const jsonWrite =
  (headers: (w: StoredWorld) => Record<string, string>) =>
  (method: string, path: WritePath, body: (v: string, w: StoredWorld) => unknown) =>
  (w: StoredWorld, v: string) =>
    probe(w, method, typeof path === "string" ? path : path(w, v), headers(w), JSON.stringify(body(v, w)));

/** Registry writes as alice, as the registry admin, and without credentials. */
const reg = jsonWrite(as.alice);
const regAdmin = jsonWrite(as.admin);
const anonymous = jsonWrite(() => ({}));

/** A console form post as `who` (with its session's CSRF token). */
function form(who: "aliceWeb" | "adminWeb", path: string, fields: (v: string) => Record<string, string>) {
  return (w: StoredWorld, v: string) => {
    const web = w[who];
    const body = new URLSearchParams({ _csrf: web.csrf ?? "", ...fields(v) }).toString();
    return probe(w, "POST", path, {
      ...as[who](w),
      "Content-Type": "application/x-www-form-urlencoded",
      Origin: w.url,
    }, body);
  };
}

/** Signs bob in through the console's form with `next` (where the 303 after it leads). */
async function signInNext(w: StoredWorld, next: string): Promise<RawResponse> {
  const web = new WebClient(w.url);
  await web.get("/ui/login");
  const body = new URLSearchParams({ _csrf: web.csrf ?? "", login: "bob", password: BOB_PASSWORD, next });
  return await probe(w, "POST", "/ui/login", {
    Cookie: web.cookieHeader(),
    "Content-Type": "application/x-www-form-urlencoded",
    Origin: w.url,
  }, body.toString());
}

/** The auth family's PATCH of one resource, at its current version. */
const authPatch =
  (kind: string, id: (w: StoredWorld) => string, body: (v: string) => Record<string, unknown>) =>
  async (w: StoredWorld, v: string) => {
    const path = `/v1/${kind}/${id(w)}`;
    const { version } = await getJson(w, path, as.auth(w));
    return await probe(w, "PATCH", path, as.auth(w), JSON.stringify({ version, ...body(v) }));
  };
const authRead =
  (kind: string, id: (w: StoredWorld) => string, pick: (item: Record<string, unknown>) => unknown) =>
  async (w: StoredWorld) => pick(await getJson(w, `/v1/${kind}/${id(w)}`, as.auth(w)));

const nomad = jsonWrite(as.nomad);

const pw = (w: StoredWorld) => w.auth.passwordMethod;
const oidc = (w: StoredWorld) => w.auth.oidcMethod;
const ldap = (w: StoredWorld) => w.auth.ldapMethod;
const group = (w: StoredWorld) => w.auth.managedGroup;
// deno-lint-ignore no-explicit-any
const attr = (name: string) => (item: any) => item.attributes?.[name];

export const storedFields: StoredField[] = [
  // Registry: box, version, provider, organization, user, token and principal fields.
  {
    family: "registry",
    name: "box short_description",
    write: reg("PUT", BOX, (v) => ({ box: { short_description: v } })),
    stored: async (w) => (await getJson(w, BOX, as.alice(w))).short_description,
  },
  {
    family: "registry",
    name: "box description",
    write: reg("PUT", BOX, (v) => ({ box: { description: v } })),
    stored: async (w) => (await getJson(w, BOX, as.alice(w))).description_markdown,
  },
  {
    family: "registry",
    name: "box name",
    write: reg("POST", "/api/v1/boxes", (v) => ({ box: { username: "acme", name: v } })),
  },
  {
    family: "registry",
    name: "version description",
    write: reg("PUT", WIP, (v) => ({ version: { description: v } })),
    stored: async (w) => (await getJson(w, WIP, as.alice(w))).description_markdown,
  },
  {
    family: "registry",
    name: "version number",
    write: reg("POST", `${BOX}/versions`, (v) => ({ version: { version: v } })),
  },
  {
    family: "registry",
    name: "provider url",
    url: true,
    write: reg("PUT", PUBLIC_PROVIDER, (v) => ({ provider: { url: v } })),
    inHeaders: (w) =>
      probe(w, "GET", "/alice/boxes/public-box/versions/0.1.0/providers/virtualbox.box", as.alice(w)),
    stored: async (w) => (await getJson(w, PUBLIC_PROVIDER, as.alice(w))).original_url,
  },
  {
    family: "registry",
    name: "provider checksum",
    write: reg("PUT", PUBLIC_PROVIDER, (v) => ({ provider: { checksum_type: "sha256", checksum: v } })),
  },
  {
    family: "registry",
    name: "provider name",
    write: reg(
      "POST",
      `${WIP}/providers`,
      (v) => ({ provider: { name: v, url: "https://files.example/x.box" } }),
    ),
  },
  {
    family: "registry",
    name: "provider architecture",
    write: reg("POST", "/api/v2/box/acme/devbox/version/1.1.0/providers", (v) => ({
      provider: { name: "virtualbox", architecture: v, url: "https://files.example/x.box" },
    })),
  },
  {
    family: "registry",
    name: "organization profile",
    write: regAdmin("PUT", "/api/v1/admin/organizations/acme", (v) => ({ organization: { profile: v } })),
    stored: async (w) => (await getJson(w, "/api/v1/admin/organizations/acme", as.admin(w))).profile,
  },
  {
    family: "registry",
    name: "organization name",
    write: regAdmin("POST", "/api/v1/admin/organizations", (v) => ({ organization: { name: v } })),
  },
  {
    family: "registry",
    name: "user profile",
    write: regAdmin("PUT", "/api/v1/admin/users/alice", (v) => ({ user: { profile: v } })),
    stored: async (w) => (await getJson(w, "/api/v1/admin/users/alice", as.admin(w))).profile,
  },
  {
    family: "registry",
    name: "user email",
    write: regAdmin("PUT", "/api/v1/admin/users/bob", (v) => ({ user: { email: v } })),
  },
  {
    family: "registry",
    name: "organization member role",
    write: regAdmin("PUT", "/api/v1/admin/organizations/acme/members/bob", (v) => ({ role: v })),
  },
  {
    family: "registry",
    name: "user mobile",
    write: regAdmin("PUT", "/api/v1/admin/users/bob", (v) => ({ user: { mobile: v } })),
  },
  {
    family: "registry",
    name: "token description",
    write: anonymous("POST", "/api/v1/authenticate", (v) => ({
      user: { login: "bob", password: BOB_PASSWORD },
      token: { description: v },
    })),
  },
  {
    family: "registry",
    name: "service principal name",
    write: regAdmin("POST", "/api/v1/admin/organizations/acme/service-principals", (v) => ({ name: v })),
  },
  // The same fields through the web console's forms (their answers are 303s with a Location).
  {
    family: "console",
    name: "console token description",
    write: form("aliceWeb", "/ui/settings/tokens", (v) => ({ description: v })),
  },
  {
    family: "console",
    name: "console box descriptions",
    write: form(
      "aliceWeb",
      "/ui/boxes/acme/devbox/edit",
      (v) => ({
        name: "devbox",
        private: "1",
        short_description: v.slice(0, 200),
        description: v,
      }),
    ),
  },
  {
    family: "console",
    name: "console box name",
    write: form("aliceWeb", "/ui/boxes/new", (v) => ({ owner: "acme", name: v })),
  },
  {
    family: "console",
    name: "console version",
    write: form("aliceWeb", "/ui/boxes/acme/devbox/versions/new", (v) => ({ version: v, description: v })),
  },
  {
    family: "console",
    name: "console version description",
    write: form("aliceWeb", "/ui/boxes/acme/devbox/versions/1.1.0/edit", (v) => ({ description: v })),
  },
  {
    family: "console",
    name: "console provider",
    url: true,
    // The console creates providers only: the one made by the run before goes first (through the API).
    write: async (w, v) => {
      await probe(w, "DELETE", "/api/v2/box/acme/devbox/version/1.1.0/provider/hyperv/amd64", as.alice(w));
      return await form("aliceWeb", "/ui/boxes/acme/devbox/versions/1.1.0/providers", () => ({
        name: "hyperv",
        architecture: "amd64",
        url: v,
      }))(w, v);
    },
    inHeaders: (w) =>
      probe(w, "GET", "/acme/boxes/devbox/versions/1.1.0/providers/hyperv/amd64/vagrant.box", as.alice(w)),
  },
  {
    family: "console",
    name: "console principal name",
    write: form("aliceWeb", "/ui/orgs/acme/service-principals", (v) => ({ name: v })),
  },
  {
    family: "console",
    name: "console member",
    write: form("aliceWeb", "/ui/orgs/acme/members", (v) => ({ username: v })),
  },
  {
    family: "console",
    name: "console organization",
    write: form("adminWeb", "/ui/admin/orgs", (v) => ({ name: v })),
  },
  // The 303 after signing in leads to `next`: the write is the header read.
  { family: "console", name: "console sign-in next", write: signInNext, inHeaders: () => Promise.resolve() },
  // Auth methods: names, descriptions and attributes; scopes, accounts, users.
  {
    family: "auth",
    name: "auth-method name",
    write: authPatch("auth-methods", pw, (v) => ({ name: v })),
    stored: authRead("auth-methods", pw, (i) => i.name),
  },
  {
    family: "auth",
    name: "auth-method description",
    write: authPatch("auth-methods", ldap, (v) => ({ description: v })),
    stored: authRead("auth-methods", ldap, (i) => i.description),
  },
  {
    family: "auth",
    name: "oidc api_url_prefix",
    url: true,
    write: authPatch("auth-methods", oidc, (v) => ({ attributes: { api_url_prefix: v } })),
    inHeaders: (w) => oidcCallback(w),
    stored: authRead("auth-methods", oidc, attr("api_url_prefix")),
  },
  {
    family: "auth",
    name: "oidc issuer",
    url: true,
    write: authPatch("auth-methods", oidc, (v) => ({ attributes: { issuer: v } })),
  },
  {
    family: "auth",
    name: "oidc client_id",
    write: authPatch("auth-methods", oidc, (v) => ({ attributes: { client_id: v } })),
    stored: authRead("auth-methods", oidc, attr("client_id")),
  },
  {
    family: "auth",
    name: "oidc claims_scopes",
    write: authPatch("auth-methods", oidc, (v) => ({ attributes: { claims_scopes: [v] } })),
  },
  {
    family: "auth",
    name: "ldap user_dn",
    write: authPatch("auth-methods", ldap, (v) => ({ attributes: { user_dn: v } })),
    stored: authRead("auth-methods", ldap, attr("user_dn")),
  },
  {
    family: "auth",
    name: "ldap urls",
    write: authPatch("auth-methods", ldap, (v) => ({ attributes: { urls: [`ldap://127.0.0.1:1/${v}`] } })),
  },
  {
    family: "auth",
    name: "scope name",
    write: authPatch("scopes", (w) => w.auth.org, (v) => ({ name: v })),
    stored: authRead("scopes", (w) => w.auth.org, (i) => i.name),
  },
  {
    family: "auth",
    name: "account description",
    write: authPatch("accounts", (w) => w.auth.account, (v) => ({ description: v })),
    stored: authRead("accounts", (w) => w.auth.account, (i) => i.description),
  },
  ...(["name", "filter"] as const).map((key) => ({
    family: "auth" as const,
    name: `managed group ${key}`,
    write: authPatch(
      "managed-groups",
      group,
      (v) => key === "name" ? { name: v } : { attributes: { filter: v } },
    ),
    stored: authRead("managed-groups", group, (i) => key === "name" ? i.name : attr("filter")(i)),
  })),
  {
    family: "auth",
    name: "account login_name",
    write: authPatch("accounts", (w) => w.auth.account, (v) => ({ attributes: { login_name: v } })),
  },
  {
    family: "auth",
    name: "scope description",
    write: authPatch("scopes", (w) => w.auth.org, (v) => ({ description: v })),
    stored: authRead("scopes", (w) => w.auth.org, (i) => i.description),
  },
  {
    family: "auth",
    name: "oidc claim maps and audiences",
    write: authPatch("auth-methods", oidc, (v) => ({
      attributes: { account_claim_maps: [`${v}=name`], allowed_audiences: [v] },
    })),
  },
  {
    family: "auth",
    name: "ldap group_dn, upn_domain and attribute maps",
    write: authPatch("auth-methods", ldap, (v) => ({
      attributes: { group_dn: v, upn_domain: v, account_attribute_maps: [`${v}=fullName`] },
    })),
  },
  // Nomad ACL policies and tokens, published events, nodes and jobs.
  {
    family: "events",
    name: "acl policy description",
    write: nomad("PUT", "/v1/acl/policy/readnodes", (v) => ({
      Name: "readnodes",
      Description: v,
      Rules: 'node { policy = "read" }',
    })),
  },
  {
    family: "events",
    name: "acl policy name",
    write: nomad(
      "PUT",
      (_w, v) => `/v1/acl/policy/${encodeURIComponent(v.replace(/[\ud800-\udfff]/g, ""))}`,
      (v) => ({ Name: v, Rules: 'node { policy = "read" }' }),
    ),
  },
  {
    family: "events",
    name: "acl role description",
    write: nomad("PUT", (w) => `/v1/acl/role/${w.roles.seeded}`, (v, w) => ({
      ID: w.roles.seeded,
      Name: "seed-role",
      Description: v,
      Policies: [{ Name: "readnodes" }],
    })),
    stored: async (w) => (await getJson(w, `/v1/acl/role/${w.roles.seeded}`, as.nomad(w))).Description,
  },
  {
    family: "events",
    name: "acl role name",
    write: async (w, v) => {
      const answer = await nomad("PUT", `/v1/acl/role/${w.roles.renamed}`, () => ({
        ID: w.roles.renamed,
        Name: v,
        Policies: [{ Name: "readnodes" }],
      }))(w, v);
      // The read by name, with the name in its path (a lone surrogate has no URL form).
      const name = encodeURIComponent(v.replace(/[\ud800-\udfff]/g, ""));
      await probe(w, "GET", `/v1/acl/role/name/${name}`, as.nomad(w));
      return answer;
    },
    stored: async (w) => (await getJson(w, `/v1/acl/role/${w.roles.renamed}`, as.nomad(w))).Name,
  },
  {
    family: "events",
    name: "acl token name",
    write: nomad("PUT", (w) => `/v1/acl/token/${w.clientAccessor}`, (v, w) => ({
      AccessorID: w.clientAccessor,
      Name: v,
      Type: "client",
      Policies: ["readnodes"],
    })),
  },
  {
    family: "events",
    name: "published event key and payload",
    write: nomad("POST", "/v1/event/publish", (v) => ({
      Events: [{
        Topic: "Node",
        Type: "NodeRegistration",
        Key: v,
        Payload: { Node: { ID: v, Name: v, [v]: v } },
      }],
    })),
  },
  {
    family: "events",
    name: "node name",
    write: nomad("PUT", "/v1/node/register", (v) => ({ Node: { ID: crypto.randomUUID(), Name: v } })),
  },
  {
    family: "events",
    name: "published event namespace and filter keys",
    write: nomad("POST", "/v1/event/publish", (v) => ({
      Events: [{
        Topic: "Job",
        Type: "JobRegistered",
        Key: "k",
        Namespace: v,
        FilterKeys: [v],
        Payload: { Job: {} },
      }],
    })),
  },
  {
    family: "events",
    name: "node datacenter, class and meta",
    write: nomad("PUT", "/v1/node/register", (v) => ({
      Node: { ID: crypto.randomUUID(), Name: "n", Datacenter: v, NodeClass: v, Meta: { [v]: v } },
    })),
  },
  {
    family: "events",
    name: "job datacenters and meta",
    write: nomad("PUT", "/v1/jobs", (v) => ({
      Job: { ID: "seed-hostile-job", Datacenters: [v], Meta: { [v]: v } },
    })),
  },
  {
    family: "events",
    name: "acl policy rules",
    write: nomad("PUT", "/v1/acl/policy/readnodes", (v) => ({
      Name: "readnodes",
      Rules: `node { policy = "read" }\nnamespace ${JSON.stringify(v)} { policy = "read" }`,
    })),
  },
  { family: "events", name: "job id", write: nomad("PUT", "/v1/jobs", (v) => ({ Job: { ID: v, Name: v } })) },
  {
    family: "events",
    name: "job namespace",
    write: nomad("PUT", "/v1/jobs", (v) => ({ Job: { ID: "seed-hostile-job", Namespace: v } })),
  },
];

export interface Read {
  path: string;
  headers: (w: StoredWorld) => Record<string, string>;
}

const reads = (headers: Read["headers"], ...paths: string[]): Read[] =>
  paths.map((path) => ({ path, headers }));

const registryReads: Read[] = [
  ...reads(
    as.admin,
    "/api/v1/admin/users",
    "/api/v1/admin/users/alice",
    "/api/v1/admin/users/bob",
    "/api/v1/admin/organizations",
    "/api/v1/admin/organizations/acme",
    "/api/v1/admin/users/bob/tokens",
    "/api/v1/admin/organizations/acme/service-principals",
    "/api/v1/admin/boxes/acme/devbox/history",
    "/api/v1/user/acme",
    "/api/v1/search?limit=100",
    "/api/v2/search?limit=100",
  ),
  ...reads(
    as.alice,
    "/api/v1/authenticate",
    "/api/v1/user/alice",
    BOX,
    `${BOX}/version/1.0.0`,
    WIP,
    `${WIP}/provider/libvirt`,
    PUBLIC_PROVIDER,
    "/api/v2/box/acme/devbox",
    "/api/v2/box/acme/devbox/version/1.1.0",
    "/api/v2/box/alice/public-box/version/0.1.0/provider/virtualbox/unknown",
    "/api/v2/vagrant/acme/devbox",
    "/api/v2/vagrant/alice/public-box",
    "/acme/devbox",
    "/alice/public-box",
    // Downloads: hosted, and external ones answered with the stored URL as Location.
    "/acme/boxes/devbox/versions/1.0.0/providers/virtualbox.box",
    "/acme/boxes/devbox/versions/1.0.0/providers/virtualbox/arm64/vagrant.box",
    "/acme/boxes/devbox/versions/1.1.0/providers/libvirt.box",
    "/acme/boxes/devbox/versions/1.1.0/providers/hyperv/amd64/vagrant.box",
    "/acme/boxes/devbox/versions/1.1.0/providers/virtualbox/amd64/vagrant.box",
    "/alice/boxes/public-box/versions/0.1.0/providers/virtualbox.box",
  ),
];

const consoleReads: Read[] = [
  ...reads(
    as.aliceWeb,
    "/",
    "/acme",
    "/alice",
    "/acme/devbox",
    "/acme/boxes/devbox",
    "/acme/boxes/devbox/versions/1.0.0",
    "/acme/boxes/devbox/versions/1.1.0",
    "/alice/boxes/public-box",
    "/alice/boxes/public-box/versions/0.1.0",
    "/boxes/search",
    "/boxes/search?q=devbox",
    "/ui/settings/tokens",
    "/ui/orgs/acme",
    "/ui/boxes/acme/devbox/edit",
    "/ui/boxes/acme/devbox/versions/new",
    "/ui/boxes/acme/devbox/versions/1.1.0/delete",
    "/ui/boxes/acme/devbox/versions/1.1.0/providers/libvirt/amd64/delete",
    "/alice/boxes/public-box/versions/0.1.0/providers/virtualbox.box",
  ),
  ...reads(as.adminWeb, "/ui/admin", "/ui/orgs/acme", "/bob"),
];

const authReads: Read[] = [
  ...reads(() => ({}), "/v1/auth-methods?scope_id=global"),
  ...reads(
    as.auth,
    "/v1/auth-methods?scope_id=global&recursive=true",
    "/v1/scopes?scope_id=global",
    "/v1/users?scope_id=global&recursive=true",
  ),
];

const eventsReads: Read[] = reads(
  as.nomad,
  "/v1/acl/policies",
  "/v1/acl/policy/readnodes",
  "/v1/acl/tokens",
  "/v1/acl/token/self",
  "/v1/acl/policy/self",
  "/v1/metrics",
  "/v1/acl/roles",
  "/v1/acl/role/name/seed-role",
  "/v1/nodes",
  "/v1/jobs?namespace=*",
  "/v1/job/seed-hostile-job",
);

/**
 * An OIDC login that the provider refuses: start (the auth URL names the state), then the callback with
 * `error`, answered with a 302 to the method's api_url_prefix + /authentication-error. Checked by probe.
 */
export async function oidcCallback(w: StoredWorld): Promise<void> {
  const started = await probe(
    w,
    "POST",
    `/v1/auth-methods/${w.auth.oidcMethod}:authenticate`,
    {},
    JSON.stringify({ command: "start" }),
  );
  if (started.status !== 200) return; // e.g. the method was made unusable by an accepted value
  const state = new URL(json(started).attributes.auth_url).searchParams.get("state") ?? "";
  const path = `/v1/auth-methods/oidc:authenticate:callback?state=${
    encodeURIComponent(state)
  }&error=access_denied`;
  const answer = await probe(w, "GET", path, {});
  if (answer.status !== 302) throw new Error(`OIDC callback → ${answer.status} ${answer.text.slice(0, 200)}`);
}

/** The routes that can show what a field of `family` stores (console fields show in both halves). */
export function readsFor(field: StoredField, w: StoredWorld): Read[] {
  switch (field.family) {
    case "registry":
    case "console":
      return [...registryReads, ...consoleReads];
    case "auth":
      return [
        ...authReads,
        ...reads(
          as.auth,
          `/v1/auth-methods/${w.auth.passwordMethod}`,
          `/v1/auth-methods/${w.auth.oidcMethod}`,
          `/v1/auth-methods/${w.auth.ldapMethod}`,
          `/v1/scopes/${w.auth.org}`,
          `/v1/accounts/${w.auth.account}`,
          `/v1/accounts?auth_method_id=${w.auth.passwordMethod}`,
          `/v1/managed-groups/${w.auth.managedGroup}`,
          `/v1/managed-groups?auth_method_id=${w.auth.oidcMethod}`,
          "/v1/auth-tokens?scope_id=global",
        ),
      ];
    case "events":
      return [
        ...eventsReads,
        ...reads(
          as.nomad,
          `/v1/acl/token/${w.clientAccessor}`,
          `/v1/acl/role/${w.roles.seeded}`,
          `/v1/acl/role/${w.roles.renamed}`,
        ),
      ];
  }
}

/** Every read of every family (the "nothing stored is lost" comparison at the end). */
export function allReads(w: StoredWorld): Read[] {
  const seen = new Set<string>();
  return (["registry", "auth", "events"] as const).flatMap((family) =>
    readsFor({ family, name: "", write: () => Promise.reject() }, w)
  ).filter((r) => {
    const key = `${r.path} ${JSON.stringify(r.headers(w))}`;
    return seen.has(key) ? false : (seen.add(key), true);
  });
}
