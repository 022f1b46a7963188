// LDAP login throughput: wharf's POST /v1/auth-methods/{id}:authenticate (direct bind, token issued and
// committed) against a raw ldapts connect+bind+unbind loop on the same slapd, same concurrency, same run;
// plus a "floor" server (authmethods_ldap_floor.ts) that only does HTTP + a user bind, to show the ceiling.
// Run: deno run -A bench/authmethods_ldap.ts [--seconds 2] [--rounds 3] [--concurrency 8] [--users 64]
// Its default export has the bench/run.ts scenario shape ({title, figures, notes}).

import { Client } from "ldapts";
import { numberedUser, peopleDn, slapdSkipReason, startSlapd } from "../tests/fixtures/slapd.ts";
import { callApi, startAuthServer } from "../tests/fixtures/wharf_auth.ts";
import { ldapAuthenticate } from "../routes/authmethods/ldap_client.ts";
import { type Figure, formatFigures } from "./lib.ts";

function flag(name: string, fallback: number): number {
  if (!import.meta.main) return fallback;
  const i = Deno.args.indexOf(`--${name}`);
  const v = i >= 0 ? Number(Deno.args[i + 1]) : NaN;
  return Number.isFinite(v) && v > 0 ? v : fallback;
}

const seconds = flag("seconds", 2);
const rounds = flag("rounds", 3);
const concurrency = flag("concurrency", 8);
const userCount = flag("users", 64);

interface Variant {
  name: string;
  /** One login; false when it failed (counted, not fatal: a loaded box may run out of ephemeral ports). */
  once: () => Promise<boolean>;
  done: number;
  failed: number;
  ms: number;
}

/** Runs `once` from `concurrency` workers for `seconds`, adding to the variant's totals. */
async function runRound(v: Variant): Promise<void> {
  let done = 0;
  const started = performance.now();
  const until = started + seconds * 1000;
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (performance.now() < until) {
        if (await v.once().catch(() => false)) done++;
        else v.failed++;
      }
    }),
  );
  v.done += done;
  v.ms += performance.now() - started;
}

/**
 * Interleaves the variants round by round (a loaded machine drifts; interleaving spreads the drift over
 * all of them) and reports each one's overall rate.
 */
async function measure(variants: Variant[]): Promise<Map<string, number>> {
  for (const v of variants) for (let i = 0; i < 20; i++) await v.once(); // warm-up
  for (let r = 0; r < rounds; r++) for (const v of variants) await runRound(v);
  const rates = new Map<string, number>();
  for (const v of variants) {
    const rate = v.done / (v.ms / 1000);
    rates.set(v.name, rate);
    console.log(
      `${v.name.padEnd(48)} ${rate.toFixed(0).padStart(7)} logins/s  (${v.done} in ${
        (v.ms / 1000).toFixed(1)
      } s)`,
    );
  }
  return rates;
}

const title = "LDAP logins: wharf vs raw ldapts on the same slapd";

export default async function ldapLoginScenario(): Promise<
  { title: string; figures: Figure[]; notes: string[] }
> {
  if (slapdSkipReason) return { title, figures: [], notes: [`skipped: ${slapdSkipReason}`] };
  const ldap = await startSlapd({ extraUsers: userCount });
  const api = await startAuthServer({ WHARF_LOG_LEVEL: "error" }, { childProcess: true });
  const floor = await startFloor(ldap.ldapUrl);
  try {
    return await runScenario(ldap.ldapUrl, api, floor.url);
  } finally {
    floor.process.kill("SIGTERM");
    await floor.process.status;
    await api.stop();
    await ldap.stop();
  }
}

/** bench/authmethods_ldap_floor.ts in a child process, like wharf. */
async function startFloor(ldapUrl: string): Promise<{ url: string; process: Deno.ChildProcess }> {
  const process = new Deno.Command(Deno.execPath(), {
    args: ["run", "-A", new URL("./authmethods_ldap_floor.ts", import.meta.url).pathname, ldapUrl, peopleDn],
    stdout: "piped",
    stderr: "inherit",
    stdin: "null",
  }).spawn();
  const reader = process.stdout.pipeThrough(new TextDecoderStream()).getReader();
  let out = "";
  for (;;) {
    const { value, done } = await reader.read();
    if (done) throw new Error("the floor server exited before listening");
    out += value;
    const url = /floor listening on (\S+)/.exec(out)?.[1];
    if (url) {
      (async () => {
        while (!(await reader.read()).done) { /* drain */ }
      })().catch(() => {});
      return { url, process };
    }
  }
}

async function runScenario(
  ldapUrl: string,
  api: Awaited<ReturnType<typeof startAuthServer>>,
  floorUrl: string,
) {
  const attributes = { urls: [ldapUrl], user_dn: peopleDn, user_attr: "uid" };
  const created = await api.call("POST", "/v1/auth-methods", {
    scope_id: "global",
    type: "ldap",
    name: "bench",
    attributes: { state: "active-public", ...attributes },
  });
  if (created.status !== 200) throw new Error(`create failed: ${JSON.stringify(created.body)}`);
  const methodId = String(created.body.id);
  // Logins rotate over distinct users, as real traffic does (wharf serializes logins of one account).
  let next = 0;
  const someone = () => numberedUser((next++ % userCount) + 1);

  const variant = (name: string, once: () => Promise<boolean>): Variant => ({
    name,
    once,
    done: 0,
    failed: 0,
    ms: 0,
  });
  const rawBind = variant("baseline: raw ldapts connect+bind+unbind", async () => {
    const u = someone();
    const client = new Client({ url: ldapUrl, timeout: 5000 });
    await client.bind(u.dn, u.password);
    await client.unbind();
    return true;
  });
  const rawBindRead = variant("baseline: raw ldapts connect+bind+read entry", async () => {
    const u = someone();
    const client = new Client({ url: ldapUrl, timeout: 5000 });
    await client.bind(u.dn, u.password);
    await client.search(u.dn, { scope: "base" });
    await client.unbind();
    return true;
  });
  const lib = variant("ldapAuthenticate (direct bind + entry read)", async () => {
    const u = someone();
    return (await ldapAuthenticate(attributes, u.uid, u.password, { timeoutMs: 5000 })).ok;
  });
  const viaApi = variant("wharf API login (LDAP, token committed)", async () => {
    const u = someone();
    const r = await callApi(api.url, "POST", `/v1/auth-methods/${methodId}:authenticate`, {
      attributes: { login_name: u.uid, password: u.password },
    });
    return r.status === 200;
  });
  const floor = variant("floor: bare Deno.serve + pooled bind, no token", async () => {
    const u = someone();
    const r = await callApi(floorUrl, "POST", "/", {
      attributes: { login_name: u.uid, password: u.password },
    });
    return r.status === 200;
  });
  console.log(
    `concurrency ${concurrency}, ${userCount} users, ${rounds} interleaved rounds of ${seconds} s per variant`,
  );
  const rates = await measure([rawBind, rawBindRead, lib, viaApi, floor]);
  const figure = (v: Variant, base: Variant, target?: string): Figure => ({
    name: v.name,
    value: rates.get(v.name)!,
    unit: "logins/s",
    baseline: { name: base.name.replace("baseline: ", ""), value: rates.get(base.name)! },
    ...(target ? { target } : {}),
  });
  const failures = [rawBind, rawBindRead, lib, viaApi, floor].filter((v) => v.failed).map((v) =>
    `${v.name}: ${v.failed} failed logins`
  );
  return {
    title,
    figures: [
      figure(lib, rawBindRead),
      figure(lib, rawBind),
      figure(viaApi, rawBindRead),
      figure(viaApi, rawBind, ">= 0.8x"),
      figure(floor, rawBind),
      figure(viaApi, floor),
    ],
    notes: [
      `concurrency ${concurrency}, ${userCount} users, ${rounds} interleaved rounds of ${seconds} s per variant`,
      ...failures,
    ],
  };
}

if (import.meta.main) {
  const result = await ldapLoginScenario();
  console.log(formatFigures(result.title, result.figures));
  for (const note of result.notes) console.log(`- ${note}`);
}
