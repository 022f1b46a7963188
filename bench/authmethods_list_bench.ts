// Auth-method list performance: 10,000 methods in 100 org scopes, recursive + filter, 1,000 per page,
// against a /health round trip measured in the same run. (list_token refreshes after 100 changes: see
// bench/authmethods_refresh.ts, which takes enough samples for a p99.)
// Run: deno bench -A bench/authmethods_list_bench.ts

import { startTestServer } from "../tests/helpers/server.ts";
import { Client, fastEnv, login } from "../tests/authmethods/helpers.ts";

const orgs = 100;
const perOrg = 100;
const server = await startTestServer(fastEnv);
const anon = new Client(server.url);
const primary = (await anon.get("/v1/auth-methods?scope_id=global")).body.items[0].id;
const admin = new Client(
  server.url,
  await login(anon, primary, "admin", fastEnv.WHARF_INITIAL_ADMIN_PASSWORD!),
);

const orgIds: string[] = [];
for (let i = 0; i < orgs; i++) {
  orgIds.push((await admin.post("/v1/scopes", { scope_id: "global", name: `org-${i}` })).body.id);
}
const methodIds: string[] = [];
const jobs: Array<() => Promise<void>> = [];
for (let i = 0; i < orgs * perOrg; i++) {
  const type = i % 3 === 0 ? "ldap" : "password";
  const body = type === "ldap"
    ? {
      scope_id: orgIds[i % orgs],
      type,
      name: `ldap-${i}`,
      attributes: { urls: ["ldap://127.0.0.1"], state: i % 2 ? "active-public" : "inactive" },
    }
    : { scope_id: orgIds[i % orgs], type, name: `pw-${i}` };
  jobs.push(async () => {
    const r = await admin.post("/v1/auth-methods", body);
    if (r.status !== 200) throw new Error(JSON.stringify(r.body));
    methodIds.push(r.body.id);
  });
}
// Concurrent creates share fsyncs (group commit), so seeding takes seconds, not minutes.
for (let i = 0; i < jobs.length; i += 64) await Promise.all(jobs.slice(i, i + 64).map((j) => j()));

const filter = encodeURIComponent(`"/item/type" == "ldap" or "/item/name" matches "^pw-[0-9]*5$"`);
const listUrl = `/v1/auth-methods?scope_id=global&recursive=true&page_size=1000&filter=${filter}`;
const first = await admin.get(listUrl);
console.log(
  `# seeded ${methodIds.length} methods; the filtered listing holds ${first.body.est_item_count} items`,
);

Deno.bench("GET /health round trip", { group: "list", baseline: true }, async () => {
  await (await fetch(`${server.url}/health`)).body?.cancel();
});

Deno.bench("list 10,000 methods recursive + filter, first page of 1,000", { group: "list" }, async () => {
  const r = await admin.get(listUrl);
  if (r.body.items.length !== 1000) throw new Error("short page");
});

let touched = 0;
Deno.bench("list 10,000 methods recursive + filter, first page after a write", {
  group: "list",
  n: 50,
  warmup: 3,
}, async (b) => {
  const id = methodIds[touched++ % methodIds.length]!;
  const cur = await admin.get(`/v1/auth-methods/${id}`);
  await admin.patch(`/v1/auth-methods/${id}`, { version: cur.body.version, description: `touch ${touched}` });
  b.start();
  const r = await admin.get(listUrl);
  b.end();
  if (r.body.items.length !== 1000) throw new Error("short page");
});

let pageToken = first.body.list_token as string;
Deno.bench("list 10,000 methods recursive + filter, next page of 1,000", { group: "list" }, async () => {
  const r = await admin.get(`${listUrl}&list_token=${pageToken}`);
  pageToken = r.body.response_type === "delta" ? r.body.list_token : first.body.list_token;
});

globalThis.addEventListener("unload", () => {
  server.stop();
});
