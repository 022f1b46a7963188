// PostgreSQL stopped and started again under write load on two wharf nodes: meanwhile every write answers 200 or
// a 503 with Retry-After in its family's shape (never another error, no node exits); afterwards both nodes
// recover within a bound, every acknowledged write is on both, and a write answered 503 is whole or absent, the
// same on both nodes (box, auth method, event at one index in one identical stream).

import { assert, assertEquals } from "../helpers/assert.ts";
import { Client as RegistryClient } from "../registry/helpers.ts";
import { adminPassword, Client as AuthClient, login } from "../authmethods/helpers.ts";
import { nodeEvent, rootSecret, subscribe } from "../events/stream_helpers.ts";
import { clusterTest, eventually } from "./helpers.ts";

const outageMs = 3000;
const recoveryBoundMs = 20_000;
/** A write answers within this (200 or 503) even while PostgreSQL is down or restarting: longer is a hang. */
const answerBoundMs = 25_000;

type Family = "registry" | "auth" | "events";

/** One write's fate: acknowledged (with what identifies it), or 503 (it may or may not have committed). */
interface Attempt {
  family: Family;
  node: number;
  name: string;
  at: number;
  /** Milliseconds from sending to the whole answer. */
  took: number;
  status: number;
  /** The box name, auth method id or event Index a 200 answered. */
  ack?: string | number;
}

/** Checks a 503 is in `family`'s error shape with Retry-After; returns what is wrong, if anything. */
function shapeProblem(family: Family, headers: Headers, text: string): string | undefined {
  if (headers.get("Retry-After") === null) return "no Retry-After";
  try {
    if (family === "events") {
      return text.length > 0 && !text.startsWith("{") ? undefined : `Nomad text: ${text}`;
    }
    const body = JSON.parse(text);
    if (family === "registry") {
      return body.success === false && typeof body.errors?.[0] === "string" ? undefined : `registry: ${text}`;
    }
    return typeof body.kind === "string" && typeof body.message === "string" ? undefined : `auth: ${text}`;
  } catch {
    return `not JSON: ${text}`;
  }
}

clusterTest(
  "PostgreSQL stopped and started under load on two nodes: 503s while down, recovery, nothing half-written",
  {
    env: {
      // Every method the loops create on one list page (a fast run creates more than the default 1,000).
      WHARF_DEFAULT_PAGE_SIZE: "100000",
      WHARF_EVENTS_HEARTBEAT_MS: "200",
    },
  },
  async (cluster) => {
    for (const name of ["one", "two"]) await cluster.spawn(name);
    const urls = cluster.started.map((n) => n.url);
    const registryToken = await new RegistryClient(urls[0]!).login("admin", "admin-password-1");
    const anon = new AuthClient(urls[0]!);
    const methods = await anon.get("/v1/auth-methods?scope_id=global");
    const primary = methods.body.items.find((m: { is_primary?: boolean }) => m.is_primary).id as string;
    const authToken = await login(anon, primary, "admin", adminPassword);
    // The admin's token reaches node two a moment after node one made it.
    await eventually("the auth token on node two", async () => {
      const r = await new AuthClient(urls[1]!, authToken).get("/v1/auth-methods?scope_id=global");
      return r.status === 200 && r.body.items.some((m: { type: string }) => m.type) ? true : undefined;
    });

    const attempts: Attempt[] = [];
    const problems: string[] = [];
    let stopping = false;
    const write = async (family: Family, node: number, name: string) => {
      const url = urls[node]!;
      const signal = AbortSignal.timeout(answerBoundMs);
      const request = family === "registry"
        ? fetch(`${url}/api/v1/boxes`, {
          method: "POST",
          headers: { Authorization: `Bearer ${registryToken}`, "Content-Type": "application/json" },
          body: JSON.stringify({ name }),
          signal,
        })
        : family === "auth"
        ? fetch(`${url}/v1/auth-methods`, {
          method: "POST",
          headers: { Authorization: `Bearer ${authToken}`, "Content-Type": "application/json" },
          body: JSON.stringify({ scope_id: "global", type: "password", name }),
          signal,
        })
        : fetch(`${url}/v1/event/publish`, {
          method: "POST",
          headers: { "X-Nomad-Token": rootSecret },
          body: JSON.stringify({ Events: [nodeEvent(name)] }),
          signal,
        });
      const at = Date.now();
      const r = await request;
      const text = await r.text();
      const attempt: Attempt = { family, node, name, at, took: Date.now() - at, status: r.status };
      if (r.status === 200) {
        const body = JSON.parse(text);
        attempt.ack = family === "registry" ? body.name : family === "auth" ? body.id : body.Index;
      } else if (r.status === 503) {
        const wrong = shapeProblem(family, r.headers, text);
        if (wrong) problems.push(`${family} on node ${node}: ${wrong}`);
      } else problems.push(`${family} on node ${node}: ${r.status} ${text}`);
      attempts.push(attempt);
    };
    const writer = async (family: Family, node: number) => {
      for (let i = 0; !stopping; i++) {
        try {
          await write(family, node, `${family[0]}-${node}-${i}`);
        } catch (err) {
          // No answer in time (a hang), or the node closed the connection or is gone.
          problems.push(`${family} on node ${node}: ${err}`);
          await new Promise((r) => setTimeout(r, 100));
        }
      }
    };
    const families: Family[] = ["registry", "auth", "events"];
    const writers = families.flatMap((f) => [0, 1].map((node) => writer(f, node)));
    const acksSince = (t: number, family: Family, node: number) =>
      attempts.filter((a) => a.at >= t && a.family === family && a.node === node && a.status === 200)
        .length;
    const summary = (t: number) =>
      families.flatMap((f) =>
        [0, 1].map((node) => {
          const mine = attempts.filter((a) => a.at >= t && a.family === f && a.node === node);
          const first = mine.find((a) => a.status === 200);
          const errors = mine.filter((a) => a.status !== 200).map((a) => `${a.status}+${a.at - t}`);
          const slowest = mine.reduce((m, a) => Math.max(m, a.took), 0);
          return `${f}@${node}: ${mine.length} answers, errors ${errors.join(",")}, first 200 at +${
            first ? first.at - t : "-"
          }, slowest ${slowest} ms`;
        })
      ).join("; ");
    const everyLoop = (ok: (family: Family, node: number) => boolean) =>
      families.every((f) => [0, 1].every((node) => ok(f, node)));

    try {
      await eventually(
        "writes flowing on every loop",
        () => Promise.resolve(everyLoop((f, n) => acksSince(0, f, n) >= 3) ? true : undefined),
        10_000,
      );
      await cluster.pg.halt();
      const down = Date.now();
      await new Promise((r) => setTimeout(r, outageMs));
      const restarting = Date.now();
      await cluster.pg.start();
      const up = Date.now();
      // Every loop succeeds again by itself after PostgreSQL is back.
      await eventually(
        "every loop writing again",
        () => Promise.resolve(everyLoop((f, n) => acksSince(up, f, n) >= 2) ? true : undefined),
        recoveryBoundMs,
        100,
      ).catch((err) => {
        throw new Error(
          `${err.message}; since the outage (${up - down} ms): ${summary(down)}; problems: ${
            problems.join(" | ")
          }`,
        );
      });
      const recoveredIn = Math.max(
        ...families.flatMap((f) =>
          [0, 1].map((node) =>
            attempts.find((a) => a.at >= up && a.family === f && a.node === node && a.status === 200)!.at -
            up
          )
        ),
      );
      // While PostgreSQL was down nothing was acknowledged: a write sent after the stop and answered before the
      // start cannot have committed. Each loop either got its 503 or was still waiting when PostgreSQL came
      // back (a write that waits out a short outage and then commits is fine); each node answered 503s.
      const during = (a: Attempt) => a.at >= down && a.at + a.took <= restarting;
      assertEquals(attempts.filter((a) => during(a) && a.status === 200).map((a) => a.name), []);
      const unavailable = attempts.filter((a) => a.status === 503);
      const context = `from 2 s before the outage (${up - down} ms): ${summary(down - 2000)}`;
      for (const f of families) {
        for (const node of [0, 1]) {
          const mine = attempts.filter((a) => a.family === f && a.node === node);
          assert(
            mine.some((a) => a.status === 503 || (a.at < restarting && a.at + a.took >= up)),
            `${f} on node ${node} neither answered 503 nor waited for PostgreSQL; ${context}`,
          );
        }
      }
      for (const node of [0, 1]) {
        assert(unavailable.some((a) => a.node === node), `no 503 on node ${node}; ${context}`);
      }
      console.log(
        `outage ${up - down} ms: ${attempts.length} writes, ${unavailable.length} answered 503, ` +
          `all loops writing again ${recoveredIn} ms after PostgreSQL was back`,
      );
    } finally {
      stopping = true;
      await Promise.all(writers);
    }
    assertEquals(problems, []);
    for (const node of cluster.started) {
      assertEquals(
        await Promise.race([node.status.then(() => "exited"), Promise.resolve("running")]),
        "running",
      );
    }

    // Boxes: acknowledged ones exist on both nodes; one answered 503 exists on both or on neither.
    const boxOn = async (node: number, name: string) =>
      (await new RegistryClient(urls[node]!).get(`/api/v1/box/admin/${name}`, { token: registryToken }))
        .status;
    let committedDespite503 = 0;
    for (const a of attempts.filter((a) => a.family === "registry")) {
      const seen = await eventually(`box ${a.name} settled`, async () => {
        const both = [await boxOn(0, a.name), await boxOn(1, a.name)];
        return both[0] === both[1] ? both[0] : undefined;
      });
      if (a.status === 200) assertEquals(seen, 200, a.name);
      else if (seen === 200) committedDespite503++;
      else assertEquals(seen, 404, a.name);
    }

    // Auth methods: both nodes list the same methods; every acknowledged one once, a 503'd name at most once.
    const listed = await Promise.all(urls.map(async (url) => {
      const r = await new AuthClient(url, authToken).get("/v1/auth-methods?scope_id=global");
      return (r.body.items as Array<{ id: string; name?: string }>).map((m) => `${m.id} ${m.name}`).sort();
    }));
    assertEquals(listed[0], listed[1]);
    const names = listed[0]!.map((m) => m.split(" ")[1]!);
    assertEquals(names.length, new Set(names).size, "a method name twice");
    for (const a of attempts.filter((a) => a.family === "auth")) {
      if (a.status === 200) assert(listed[0]!.includes(`${a.ack} ${a.name}`), `${a.name} missing`);
      else if (names.includes(a.name)) committedDespite503++;
    }

    // Events: one identical, increasing stream on both nodes; each acknowledged key once at its Index.
    const streams = await Promise.all(urls.map(async (url) => {
      const stream = await subscribe(url, "index=1&topic=Node");
      const frames = await stream.dataUntilQuiet(1500);
      await stream.close();
      return frames.flatMap((f) => f.Events ?? []).map((e) => ({ index: e.Index, key: e.Key }));
    }));
    assertEquals(streams[0], streams[1]);
    const stream = streams[0]!;
    for (let i = 1; i < stream.length; i++) assert(stream[i]!.index > stream[i - 1]!.index, "increasing");
    assertEquals(stream.length, new Set(stream.map((e) => e.key)).size, "an event twice");
    const indexOf = new Map(stream.map((e) => [e.key, e.index]));
    for (const a of attempts.filter((a) => a.family === "events")) {
      if (a.status === 200) assertEquals(indexOf.get(a.name), a.ack, a.name);
      else if (indexOf.has(a.name)) committedDespite503++;
    }
    console.log(`${committedDespite503} writes answered 503 had committed (whole on both nodes)`);
    // Healthy again by itself (a node's view is read again within its poll interval).
    for (const url of urls) {
      await eventually(
        `${url} healthy`,
        async () => {
          const health = await (await fetch(`${url}/health`)).json();
          return health.status === "ok" ? true : undefined;
        },
        15_000,
        200,
      );
    }
  },
);
