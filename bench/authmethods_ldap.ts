// LDAP login throughput: wharf's POST /v1/auth-methods/{id}:authenticate (direct bind, entry read, token
// issued and committed) against a raw ldapts connect+bind+unbind loop on the same slapd, same concurrency,
// same run; plus "floor" servers (authmethods_ldap_floor.ts) that do HTTP + a user bind and, one at a time,
// what a login adds (entry read, durable commit), to show how far the target is reachable.
// Run: deno run -A bench/authmethods_ldap.ts [--seconds 0.75] [--rounds 10] [--concurrency 8] [--users 64]
//      [--floor-only] (only the raw bind loop and the floor servers, for more rounds in the same time)
// Its default export has the bench/run.ts scenario shape ({title, figures, notes}).

import { Client } from "ldapts";
import { numberedUser, peopleDn, slapdSkipReason, startSlapd } from "../tests/fixtures/slapd.ts";
import { callApi, startAuthServer } from "../tests/fixtures/wharf_auth.ts";
import { ldapAuthenticate } from "../routes/authmethods/login/ldap_client.ts";
import { type Figure, formatFigures, median } from "./lib.ts";

function flag(name: string, fallback: number): number {
  if (!import.meta.main) return fallback;
  const i = Deno.args.indexOf(`--${name}`);
  const v = i >= 0 ? Number(Deno.args[i + 1]) : NaN;
  return Number.isFinite(v) && v > 0 ? v : fallback;
}

const seconds = flag("seconds", 0.75);
const rounds = flag("rounds", 10);
const concurrency = flag("concurrency", 8);
const userCount = flag("users", 64);
const floorOnly = import.meta.main && Deno.args.includes("--floor-only");

interface Variant {
  name: string;
  /** One login; false when it failed (counted, not fatal: a loaded box may run out of ephemeral ports). */
  once: () => Promise<boolean>;
  done: number;
  failed: number;
  ms: number;
  /** logins/s of each round. */
  rates: number[];
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
  const ms = performance.now() - started;
  v.done += done;
  v.ms += ms;
  v.rates.push(done / (ms / 1000));
}

/** Per-round ratios of `v` to `base` (same round), as "median (min–max)". */
function ratioSummary(v: Variant, base: Variant): string {
  const ratios = v.rates.map((r, i) => r / base.rates[i]!);
  return `${median(ratios).toFixed(2)}× (${Math.min(...ratios).toFixed(2)}–${
    Math.max(...ratios).toFixed(2)
  })`;
}

/**
 * Interleaves the variants round by round (a loaded machine drifts; interleaving spreads the drift over
 * all of them) and reports each one's median rate and its per-round ratio to `base`.
 */
async function measure(variants: Variant[], base: Variant): Promise<Map<string, number>> {
  for (const v of variants) for (let i = 0; i < 50; i++) await v.once(); // warm-up
  for (let r = 0; r < rounds; r++) for (const v of variants) await runRound(v);
  const rates = new Map<string, number>();
  for (const v of variants) {
    rates.set(v.name, median(v.rates));
    console.log(
      `${v.name.padEnd(52)} median ${median(v.rates).toFixed(0).padStart(6)} logins/s  rounds ${
        v.rates.map((r) => r.toFixed(0)).join(" ")
      }  / raw bind ${ratioSummary(v, base)}`,
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
  const floors: Floor[] = [];
  try {
    for (const mode of floorModes) floors.push(await startFloor(ldap.ldapUrl, mode));
    return await runScenario(ldap.ldapUrl, api, floors);
  } finally {
    for (const f of floors) await f.stop();
    await api.stop();
    await ldap.stop();
  }
}

const floorModes = ["bind", "read", "log", "store"] as const;
const floorNames: Record<(typeof floorModes)[number], string> = {
  bind: "floor: Deno.serve + pooled bind",
  read: "floor: + entry read",
  log: "floor: + entry read + fsync'd EventLog commit",
  store: "floor: + entry read + DocumentStore commit",
};

interface Floor {
  mode: (typeof floorModes)[number];
  url: string;
  stop(): Promise<void>;
}

/** bench/authmethods_ldap_floor.ts in a child process (with its own data dir), like wharf. */
async function startFloor(ldapUrl: string, mode: Floor["mode"]): Promise<Floor> {
  const dir = await Deno.makeTempDir({ prefix: "wharf-floor-" });
  const process = new Deno.Command(Deno.execPath(), {
    args: [
      "run",
      "-A",
      new URL("./authmethods_ldap_floor.ts", import.meta.url).pathname,
      ldapUrl,
      peopleDn,
      mode,
      dir,
    ],
    stdout: "piped",
    stderr: "inherit",
    stdin: "null",
  }).spawn();
  const stop = async () => {
    try {
      process.kill("SIGTERM");
    } catch {
      // already exited
    }
    await process.status;
    await Deno.remove(dir, { recursive: true }).catch(() => {});
  };
  const reader = process.stdout.pipeThrough(new TextDecoderStream()).getReader();
  let out = "";
  for (;;) {
    const { value, done } = await reader.read();
    if (done) {
      await stop();
      throw new Error(`the floor server (${mode}) exited before listening`);
    }
    out += value;
    const url = /floor listening on (\S+)/.exec(out)?.[1];
    if (url) {
      (async () => {
        while (!(await reader.read()).done) { /* drain */ }
      })().catch(() => {});
      return { mode, url, stop };
    }
  }
}

async function runScenario(
  ldapUrl: string,
  api: Awaited<ReturnType<typeof startAuthServer>>,
  floors: Floor[],
) {
  const attributes = {
    urls: [ldapUrl],
    user_dn: peopleDn,
    user_attr: "uid",
    // As a deployment would set it: the account's full_name and email come from the entry.
    account_attribute_maps: ["cn=fullName", "mail=email"],
  };
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
    rates: [],
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
  const floorVariants = floors.map((f) =>
    variant(floorNames[f.mode], async () => {
      const u = someone();
      const r = await callApi(f.url, "POST", "/", {
        attributes: { login_name: u.uid, password: u.password },
      });
      return r.status === 200;
    })
  );
  const all = floorOnly ? [rawBind, ...floorVariants] : [rawBind, rawBindRead, lib, viaApi, ...floorVariants];
  console.log(
    `concurrency ${concurrency}, ${userCount} users, ${rounds} interleaved rounds of ${seconds} s per variant`,
  );
  const rates = await measure(all, rawBind);
  const figure = (v: Variant, base: Variant, target?: string): Figure => ({
    name: v.name,
    value: rates.get(v.name)!,
    unit: "logins/s",
    baseline: { name: base.name.replace("baseline: ", ""), value: rates.get(base.name)! },
    ...(target ? { target } : {}),
  });
  const failures = all.filter((v) => v.failed).map((v) => `${v.name}: ${v.failed} failed logins`);
  return {
    title,
    figures: [
      ...(floorOnly
        ? []
        : [figure(lib, rawBindRead), figure(viaApi, rawBindRead), figure(viaApi, rawBind, ">= 0.8x")]),
      ...floorVariants.map((f) => figure(f, rawBind)),
    ],
    notes: [
      `concurrency ${concurrency}, ${userCount} users, ${rounds} interleaved rounds of ${seconds} s per variant; ` +
      "medians of the rounds' rates",
      // With --floor-only the API variant never ran: no line for it (its ratio would be NaN).
      ...[...(floorOnly ? [] : [viaApi]), ...floorVariants].map((v) =>
        `${v.name} / raw bind loop per round: ${ratioSummary(v, rawBind)}`
      ),
      ...failures,
    ],
  };
}

if (import.meta.main) {
  const result = await ldapLoginScenario();
  console.log(formatFigures(result.title, result.figures));
  for (const note of result.notes) console.log(`- ${note}`);
}
