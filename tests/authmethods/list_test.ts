// Integration tests of GET /v1/auth-methods: pagination, refresh with removed_ids, list tokens,
// recursion, filters and the anonymous view.

import { assert, assertEquals } from "../helpers/assert.ts";
import { type AuthFixture, Client, makeUser, startAuthServer } from "./helpers.ts";

async function withServer(fn: (f: AuthFixture) => Promise<void>, env: Record<string, string> = {}) {
  const f = await startAuthServer(env);
  try {
    await fn(f);
  } finally {
    await f.stop();
  }
}

async function org(f: AuthFixture, name: string): Promise<string> {
  const r = await f.admin.post("/v1/scopes", { scope_id: "global", name });
  assertEquals(r.status, 200, JSON.stringify(r.body));
  return r.body.id;
}

async function passwordMethods(f: AuthFixture, scope: string, n: number): Promise<string[]> {
  const ids: string[] = [];
  for (let i = 0; i < n; i++) {
    const r = await f.admin.post("/v1/auth-methods", { scope_id: scope, type: "password", name: `m${i}` });
    ids.push(r.body.id);
  }
  return ids;
}

const listUrl = (scope: string, extra = "") => `/v1/auth-methods?scope_id=${scope}${extra}`;

Deno.test("list pages of 2 over 5 methods are delta, delta, complete in created_time order", () =>
  withServer(async (f) => {
    const scope = await org(f, "paging");
    const ids = await passwordMethods(f, scope, 5);
    const seen: string[] = [];
    const types: string[] = [];
    let token = "";
    for (let i = 0; i < 3; i++) {
      const r = await f.admin.get(listUrl(scope, `&page_size=2${token ? `&list_token=${token}` : ""}`));
      assertEquals(r.status, 200, JSON.stringify(r.body));
      types.push(r.body.response_type);
      seen.push(...r.body.items.map((x: { id: string }) => x.id));
      assertEquals(r.body.sort_by, "created_time");
      assertEquals(r.body.sort_dir, "desc");
      assertEquals(r.body.est_item_count, 5);
      token = r.body.list_token;
    }
    assertEquals(types, ["delta", "delta", "complete"]);
    assertEquals(seen, [...ids].reverse());
  }));

Deno.test("list truncates page_size to the default and returns the exact empty envelope", () =>
  withServer(async (f) => {
    const scope = await org(f, "trunc");
    const empty = await f.admin.get(listUrl(scope));
    assertEquals(empty.body, { response_type: "complete", sort_by: "created_time", sort_dir: "desc" });
    await passwordMethods(f, scope, 4);
    const r = await f.admin.get(listUrl(scope, "&page_size=1000"));
    assertEquals(r.body.items.length, 3);
    assertEquals(r.body.response_type, "delta");
    const zero = await f.admin.get(listUrl(scope, "&page_size=0"));
    assertEquals(zero.body.items.length, 3);
    assertEquals((await f.admin.get(listUrl(scope, "&page_size=abc"))).status, 400);
    assertEquals((await f.admin.get(listUrl(scope, "&page_size=-1"))).status, 400);
    const noScope = await f.admin.get("/v1/auth-methods");
    assertEquals(noScope.status, 400);
    assertEquals(noScope.body.details.request_fields[0].name, "scope_id");
    assertEquals((await f.admin.get(listUrl("o_1234567890"))).status, 404);
    assertEquals((await f.admin.get(listUrl("nonsense"))).status, 400);
  }, { WHARF_DEFAULT_PAGE_SIZE: "3" }));

Deno.test("list refresh returns changes by updated_time and the ids removed since", () =>
  withServer(async (f) => {
    const scope = await org(f, "refresh");
    const [a, b, c] = await passwordMethods(f, scope, 3);
    const first = await f.admin.get(listUrl(scope));
    assertEquals(first.body.response_type, "complete");
    const quiet = await f.admin.get(listUrl(scope, `&list_token=${first.body.list_token}`));
    assertEquals(quiet.body.response_type, "complete");
    assertEquals(quiet.body.sort_by, "updated_time");
    assert(!("items" in quiet.body) && !("removed_ids" in quiet.body));
    assertEquals(
      (await f.admin.patch(`/v1/auth-methods/${a}`, { version: 1, description: "changed" })).status,
      200,
    );
    assertEquals((await f.admin.delete(`/v1/auth-methods/${b}`)).status, 200);
    const created = (await f.admin.post("/v1/auth-methods", { scope_id: scope, type: "password" })).body.id;
    const refresh = await f.admin.get(listUrl(scope, `&list_token=${quiet.body.list_token}`));
    assertEquals(refresh.body.items.map((x: { id: string }) => x.id), [created, a]);
    assertEquals(refresh.body.removed_ids, [b]);
    assertEquals(refresh.body.est_item_count, 3);
    const again = await f.admin.get(listUrl(scope, `&list_token=${refresh.body.list_token}`));
    assert(!("items" in again.body) && !("removed_ids" in again.body));
    // A change that makes an item stop matching the filter reports it as removed.
    const filter = `&filter=${encodeURIComponent('"/item/description" is empty')}`;
    const fl = await f.admin.get(listUrl(scope, filter));
    assertEquals(fl.body.items.map((x: { id: string }) => x.id), [created, c]);
    await f.admin.patch(`/v1/auth-methods/${c}`, { version: 1, description: "now described" });
    const flr = await f.admin.get(listUrl(scope, `${filter}&list_token=${fl.body.list_token}`));
    assertEquals(flr.body.removed_ids, [c]);
  }));

Deno.test("list tokens are refused when tampered, or for another caller or query", () =>
  withServer(async (f) => {
    const scope = await org(f, "tokens");
    await passwordMethods(f, scope, 3);
    const r = await f.admin.get(listUrl(scope, "&page_size=1"));
    const token: string = r.body.list_token;
    const tampered = token.slice(0, 10) + (token[10] === "A" ? "B" : "A") + token.slice(11);
    const bad = await f.admin.get(listUrl(scope, `&list_token=${tampered}`));
    assertEquals(bad.status, 400);
    assertEquals(bad.body.kind, "InvalidArgument");
    assertEquals(bad.body.details.request_fields[0].name, "list_token");
    assertEquals((await f.admin.get(listUrl(scope, "&list_token=garbage"))).status, 400);
    const other = await f.anon.get(listUrl(scope, `&list_token=${token}`));
    assertEquals(other.status, 400);
    assertEquals(other.body, {
      kind: "invalid list token",
      message: "grants have changed since list token was issued",
    });
    const query = await f.admin.get(listUrl(scope, `&recursive=true&list_token=${token}`));
    assertEquals(query.body, {
      kind: "invalid list token",
      message: "list token was issued for a different query",
    });
    const filtered = await f.admin.get(listUrl(scope, `&filter=item.name==m1&list_token=${token}`));
    assertEquals(filtered.body.kind, "invalid list token");
    assertEquals(
      (await f.admin.get(listUrl(scope, `&page_size=2&list_token=${token}`))).status,
      200,
      "page size may change",
    );
  }));

Deno.test("list recursive on global adds the org scopes", () =>
  withServer(async (f) => {
    const o1 = await org(f, "r1");
    const o2 = await org(f, "r2");
    const [m1] = await passwordMethods(f, o1, 1);
    const [m2] = await passwordMethods(f, o2, 1);
    const flat = await f.admin.get(listUrl("global"));
    assertEquals(flat.body.items.length, 1);
    const deep = await f.admin.get(listUrl("global", "&recursive=true"));
    const ids = deep.body.items.map((x: { id: string }) => x.id);
    assertEquals(ids.length, 3);
    assert(ids.includes(m1) && ids.includes(m2) && ids.includes(f.primaryMethodId));
    const org1 = await f.admin.get(listUrl(o1, "&recursive=true"));
    assertEquals(org1.body.items.map((x: { id: string }) => x.id), [m1]);
  }));

Deno.test("list anonymous and non-admin callers see password and active-public methods, reduced", () =>
  withServer(async (f) => {
    const scope = await org(f, "anon");
    const attrs = { urls: ["ldap://127.0.0.1"] };
    const pub = await f.admin.post("/v1/auth-methods", {
      scope_id: scope,
      type: "ldap",
      name: "pub",
      attributes: { ...attrs, state: "active-public" },
    });
    await f.admin.post("/v1/auth-methods", {
      scope_id: scope,
      type: "ldap",
      attributes: { ...attrs, state: "active-private" },
    });
    await f.admin.post("/v1/auth-methods", { scope_id: scope, type: "ldap", attributes: attrs });
    await f.admin.post("/v1/auth-methods", {
      scope_id: scope,
      type: "oidc",
      attributes: { client_id: "c", client_secret: "s", api_url_prefix: "https://x.example" },
    });
    const [pw] = await passwordMethods(f, scope, 1);
    const { client: user } = await makeUser(f, "carol");
    for (const c of [f.anon, user, new Client(f.server.url, "at_1234567890_s1notvalid")]) {
      const r = await c.get(listUrl(scope));
      assertEquals(r.status, 200);
      assertEquals(r.body.items.map((x: { id: string }) => x.id), [pw, pub.body.id]);
      assertEquals(r.body.items[1], {
        id: pub.body.id,
        scope_id: scope,
        scope: { id: scope, type: "org", name: "anon", parent_scope_id: "global" },
        name: "pub",
        type: "ldap",
        authorized_actions: ["authenticate"],
      });
      assertEquals(r.body.est_item_count, 2);
    }
    assertEquals((await f.admin.get(listUrl(scope))).body.items.length, 5);
    const hidden = await f.anon.get(
      listUrl(scope, `&filter=${encodeURIComponent('"/item/attributes/state" == "active-public"')}`),
    );
    assertEquals(hidden.body, { response_type: "complete", sort_by: "created_time", sort_dir: "desc" });
  }));

Deno.test("list filters select by type, name and attributes and reject bad syntax on filter", () =>
  withServer(async (f) => {
    const scope = await org(f, "filters");
    const ldap = await f.admin.post("/v1/auth-methods", {
      scope_id: scope,
      type: "ldap",
      name: "corp-ldap",
      attributes: { urls: ["ldap://x.example"], state: "active-public" },
    });
    const oidc = await f.admin.post("/v1/auth-methods", {
      scope_id: scope,
      type: "oidc",
      name: "corp-sso",
      attributes: {
        client_id: "c",
        client_secret: "s",
        api_url_prefix: "https://x.example",
        signing_algorithms: ["RS256"],
      },
    });
    await passwordMethods(f, scope, 1);
    const q = async (filter: string) => {
      const r = await f.admin.get(listUrl(scope, `&filter=${encodeURIComponent(filter)}`));
      assertEquals(r.status, 200, `${filter}: ${JSON.stringify(r.body)}`);
      return (r.body.items ?? []).map((x: { id: string }) => x.id);
    };
    assertEquals(await q(`"/item/type" == "oidc"`), [oidc.body.id]);
    assertEquals(await q(`"/item/name" matches "^corp-"`), [oidc.body.id, ldap.body.id]);
    assertEquals(await q(`"/item/attributes/state" == "active-public" and item.scope_id == "${scope}"`), [
      ldap.body.id,
    ]);
    assertEquals(await q(`"RS256" in "/item/attributes/signing_algorithms"`), [oidc.body.id]);
    assertEquals((await q(`not ("/item/name" is empty)`)).length, 3);
    assertEquals((await q(`item.type != "ldap" or item.name contains "ldap"`)).length, 3);
    const bad = await f.admin.get(listUrl(scope, `&filter=${encodeURIComponent('"/item/type" = "x"')}`));
    assertEquals(bad.status, 400);
    assertEquals(bad.body.message, "Improperly formatted identifier.");
    assertEquals(bad.body.details.request_fields[0].name, "filter");
    assert(
      bad.body.details.request_fields[0].description.startsWith(
        "This field could not be parsed. at position 14",
      ),
    );
  }));

Deno.test("list stays exact across writes between listings (cached listings are patched)", () =>
  withServer(async (f) => {
    const scope = await org(f, "patched");
    const ids = await passwordMethods(f, scope, 4);
    const filter = `&filter=${encodeURIComponent('"/item/name" matches "^m"')}`;
    const names = async () =>
      ((await f.admin.get(listUrl(scope, filter))).body.items ?? []).map((x: { id: string }) => x.id);
    assertEquals(await names(), [...ids].reverse());
    await f.admin.patch(`/v1/auth-methods/${ids[1]}`, { version: 1, name: "renamed" });
    assertEquals(await names(), [ids[3], ids[2], ids[0]]);
    await f.admin.patch(`/v1/auth-methods/${ids[1]}`, { version: 2, name: "m-back" });
    await f.admin.delete(`/v1/auth-methods/${ids[2]}`);
    const created =
      (await f.admin.post("/v1/auth-methods", { scope_id: scope, type: "password", name: "m-new" })).body.id;
    assertEquals(await names(), [created, ids[3], ids[1], ids[0]]);
    await f.admin.post("/v1/auth-methods", { scope_id: "global", type: "password", name: "m-elsewhere" });
    assertEquals(await names(), [created, ids[3], ids[1], ids[0]]);
    const r = await f.admin.get(listUrl(scope, filter));
    assertEquals(r.body.est_item_count, 4);
  }));

Deno.test("list patched from cache equals a fresh listing after random writes", () =>
  withServer(async (f) => {
    const scope = await org(f, "random");
    const live = new Map<string, number>();
    for (const id of await passwordMethods(f, scope, 6)) live.set(id, 1);
    const filter = '"/item/name" matches "[02468]$" or item.description is empty';
    const list = async (spaces: number) =>
      (await f.admin.get(listUrl(scope, `&filter=${encodeURIComponent(filter + " ".repeat(spaces))}`))).body;
    await list(0);
    let seed = 7;
    const rand = (n: number) => (seed = (seed * 1103515245 + 12345) % 2147483648) % n;
    for (let step = 1; step <= 25; step++) {
      const ids = [...live.keys()];
      const op = rand(3);
      if (op === 0 || ids.length === 0) {
        const r = await f.admin.post("/v1/auth-methods", {
          scope_id: scope,
          type: "password",
          name: `n${rand(10)}-${step}`,
        });
        live.set(r.body.id, 1);
      } else if (op === 1) {
        const id = ids[rand(ids.length)]!;
        const body = rand(2)
          ? { name: `p${rand(10)}-${step}` }
          : { description: rand(2) ? `d${step}` : null };
        await f.admin.patch(`/v1/auth-methods/${id}`, { version: live.get(id), ...body });
        live.set(id, live.get(id)! + 1);
      } else {
        const id = ids[rand(ids.length)]!;
        await f.admin.delete(`/v1/auth-methods/${id}`);
        live.delete(id);
      }
      const patched = await list(0);
      const fresh = await list(step);
      assertEquals(patched.items, fresh.items, `step ${step}`);
      assertEquals(patched.est_item_count, fresh.est_item_count);
    }
  }));
