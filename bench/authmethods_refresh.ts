// list_token refresh latency after 100 changes (issue #4 target: p99 < 10 ms) with enough samples for a p99:
// 10,000 methods in 100 org scopes, the list bench's recursive + filtered query, then N rounds of
// {100 concurrent changes (90 updates, 5 deletes, 5 creates) → one timed refresh}, each refresh continuing
// the previous one's list_token as a syncing client does. A GET /health round trip is timed right after
// each refresh as the same-run baseline. wharf runs in a child process so the client's garbage (and its
// JSON parsing) is not collected in the server's heap.
// Run: deno run -A bench/authmethods_refresh.ts [--rounds 200]

import { startAuthServer } from "../tests/fixtures/wharf_auth.ts";

function flag(name: string, fallback: number): number {
  const i = Deno.args.indexOf(`--${name}`);
  const v = i >= 0 ? Number(Deno.args[i + 1]) : NaN;
  return Number.isFinite(v) && v > 0 ? v : fallback;
}

const rounds = flag("rounds", 200);
const orgs = 100;
const perOrg = 100;
const changesPerRound = 100;
const deletesPerRound = 5;

const api = await startAuthServer({ WHARF_LOG_LEVEL: "error" }, { childProcess: true });

async function ok(method: string, path: string, body?: unknown) {
  const r = await api.call(method, path, body);
  if (r.status !== 200) throw new Error(`${method} ${path}: ${r.status} ${JSON.stringify(r.body)}`);
  return r.body;
}

async function inBatches(jobs: Array<() => Promise<void>>, width: number) {
  for (let i = 0; i < jobs.length; i += width) await Promise.all(jobs.slice(i, i + width).map((j) => j()));
}

const orgIds: string[] = [];
for (let i = 0; i < orgs; i++) {
  orgIds.push(String((await ok("POST", "/v1/scopes", { scope_id: "global", name: `org-${i}` })).id));
}

/** Live methods: id → version (kept here so updates need no read first). */
const versions = new Map<string, number>();
let created = 0;
function newMethodBody() {
  const i = created++;
  return i % 3 === 0
    ? {
      scope_id: orgIds[i % orgs],
      type: "ldap",
      name: `ldap-${i}`,
      attributes: { urls: ["ldap://127.0.0.1"], state: i % 2 ? "active-public" : "inactive" },
    }
    : { scope_id: orgIds[i % orgs], type: "password", name: `pw-${i}` };
}
async function createOne() {
  const body = await ok("POST", "/v1/auth-methods", newMethodBody());
  versions.set(String(body.id), Number(body.version));
}
await inBatches(Array.from({ length: orgs * perOrg }, () => createOne), 64);

const filter = encodeURIComponent(`"/item/type" == "ldap" or "/item/name" matches "^pw-[0-9]*5$"`);
const listUrl = `/v1/auth-methods?scope_id=global&recursive=true&page_size=1000&filter=${filter}`;

/** Pages through a phase; returns the token that starts the next refresh. */
async function drain(first: Record<string, unknown>): Promise<string> {
  let r = first;
  while (r.response_type === "delta") r = await ok("GET", `${listUrl}&list_token=${r.list_token}`);
  return String(r.list_token);
}
let token = await drain(await ok("GET", listUrl));
console.log(`seeded ${versions.size} methods; ${rounds} rounds of ${changesPerRound} changes + 1 refresh`);

let cursor = 0;
const refreshMs: number[] = [];
const healthMs: number[] = [];
let checked = 0;
for (let round = 0; round < rounds; round++) {
  const jobs: Array<() => Promise<void>> = [];
  const deleted: string[] = [];
  const live = [...versions.keys()];
  for (let i = 0; i < deletesPerRound; i++) {
    const id = live[(round * 7919 + i * 104729) % live.length]!;
    if (deleted.includes(id)) continue;
    versions.delete(id);
    deleted.push(id);
    jobs.push(async () => void await ok("DELETE", `/v1/auth-methods/${id}`));
    jobs.push(createOne);
  }
  for (let n = jobs.length; n < changesPerRound; cursor++) {
    const id = live[cursor % live.length]!;
    if (!versions.has(id)) continue;
    n++;
    jobs.push(async () => {
      const body = await ok("PATCH", `/v1/auth-methods/${id}`, {
        version: versions.get(id),
        description: `round ${round}`,
      });
      versions.set(id, Number(body.version));
    });
  }
  await Promise.all(jobs.map((j) => j()));

  const t0 = performance.now();
  const refreshed = await ok("GET", `${listUrl}&list_token=${token}`);
  refreshMs.push(performance.now() - t0);
  const t1 = performance.now();
  await (await fetch(`${api.url}/health`)).body?.cancel();
  healthMs.push(performance.now() - t1);

  // Correctness while measuring: every method deleted this round is reported as removed.
  const removed = new Set((refreshed.removed_ids as string[] | undefined) ?? []);
  for (const id of deleted) {
    if (!removed.has(id)) throw new Error(`round ${round}: ${id} missing from removed_ids`);
  }
  checked += deleted.length;
  token = await drain(refreshed);
}

function summary(name: string, xs: number[]): string {
  const s = [...xs].sort((a, b) => a - b);
  const q = (p: number) => s[Math.min(s.length - 1, Math.ceil(p * s.length) - 1)]!.toFixed(2);
  const avg = (s.reduce((a, b) => a + b, 0) / s.length).toFixed(2);
  return `| ${name} | ${s.length} | ${avg} | ${q(0.5)} | ${q(0.75)} | ${q(0.99)} | ${
    s[s.length - 1]!.toFixed(2)
  } |`;
}
console.log("| Measure (ms) | n | avg | p50 | p75 | p99 | max |\n|---|---:|---:|---:|---:|---:|---:|");
console.log(summary("GET /health round trip (baseline, after each refresh)", healthMs));
console.log(summary("list_token refresh after 100 changes (first page)", refreshMs));
console.log(`- ${checked} deleted ids all reported in removed_ids; target: refresh p99 < 10 ms`);
await api.stop();
