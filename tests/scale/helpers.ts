// What the multi-node scale tests share: a fixed root key, nodes started as real processes on one database (and
// stopped again), a Deno.test with its PostgreSQL (and Swift) around them, waiting for another node to catch up,
// and reading a stream's indexes.

import postgres from "postgres";
import { type ChildServer, spawnServer } from "../helpers/server.ts";
import { type PostgresServer, postgresSkipReason, startPostgres } from "../fixtures/postgres.ts";
import { startSwift, type SwiftServer, swiftSkipReason } from "../fixtures/swift.ts";
import { fastEnv } from "../authmethods/helpers.ts";
import { rootSecret, type StreamReader } from "../events/stream_helpers.ts";

/** A base64 root key of 32 bytes of `fill`: every node of one test takes the same key. */
export function testRootKey(fill: number): string {
  return btoa(String.fromCharCode(...new Uint8Array(32).fill(fill)));
}

/** Polls `fn` every `pollMs` until it returns a value; throws naming `what` after `ms`. */
export async function eventually<T>(
  what: string,
  fn: () => Promise<T | undefined>,
  ms = 5000,
  pollMs = 20,
): Promise<T> {
  const deadline = Date.now() + ms;
  while (true) {
    const v = await fn();
    if (v !== undefined) return v;
    if (Date.now() > deadline) throw new Error(`${what}: not within ${ms} ms`);
    await new Promise((r) => setTimeout(r, pollMs));
  }
}

/** wharf processes, each in its own temp data dir; `stop` ends the started ones and removes every dir. */
export class Nodes {
  readonly started: ChildServer[] = [];
  readonly #dirs: string[] = [];

  /** Starts one node named `name` (WHARF_NODE_NAME) with `env`. */
  async spawn(name: string, env: Record<string, string>): Promise<ChildServer> {
    const dir = await Deno.makeTempDir({ prefix: `wharf-node-${name}-` });
    this.#dirs.push(dir);
    const node = await spawnServer(dir, { ...env, WHARF_NODE_NAME: name });
    this.started.push(node);
    return node;
  }

  async stop(signal: Deno.Signal): Promise<void> {
    for (const n of this.started) {
      n.kill(signal);
      await n.status;
    }
    for (const d of this.#dirs) await Deno.remove(d, { recursive: true });
  }
}

/** Reads `stream` until the event with index `last`, returning every event index seen in order. */
export async function indexesUntil(stream: StreamReader, last: number): Promise<number[]> {
  const seen: number[] = [];
  while (seen.at(-1) !== last) {
    const frame = await stream.nextData(10_000);
    if (!frame) throw new Error("stream ended");
    for (const e of frame.Events ?? []) seen.push(e.Index);
  }
  await stream.close();
  return seen;
}

export interface ClusterOptions {
  /** Settings for every node over the common ones (ClusterContext.env). */
  env?: Record<string, string>;
  /** Starts Swift too; the nodes keep their blobs in this bucket. */
  bucket?: string;
  /** How the nodes are stopped at the end (default SIGTERM; SIGKILL where a clean shutdown is not the point). */
  stopSignal?: Deno.Signal;
}

export interface ClusterContext {
  /** The test's PostgreSQL server (halt() and start() it for an outage; createDatabase() for another one). */
  pg: PostgresServer;
  /** The object store, when a bucket was asked for. */
  swift: SwiftServer | undefined;
  databaseUrl: string;
  /** One connection to the test's database, for reading its tables; closed at the end. */
  db: postgres.Sql;
  /**
   * What every node gets: the database, one root key, registry admin password "admin-password-1", the ACL
   * bootstrap secret `rootSecret`, cheap password hashing (fastEnv: auth admin password "admin-password-1"),
   * registry rate limits off, the bucket's S3 settings if any, then options.env.
   */
  env: Record<string, string>;
  /** Starts node `name` (WHARF_NODE_NAME) with env and `extra`. */
  spawn(name: string, extra?: Record<string, string>): Promise<ChildServer>;
  /** Every node started, in order. */
  started: ChildServer[];
  /** The nodes; nodes.spawn(name, env) starts one with exactly `env` (not ClusterContext.env). */
  nodes: Nodes;
  /** Runs `cleanup` at the end, before the nodes stop (the last deferred first). */
  defer(cleanup: () => unknown): void;
}

/**
 * Registers a Deno.test (ignored without PostgreSQL, or Swift when a bucket is asked for) that starts PostgreSQL
 * with a fresh database (and Swift), runs `fn`, and always stops what `defer` was given, the nodes, and the servers.
 */
export function clusterTest(
  name: string,
  options: ClusterOptions,
  fn: (c: ClusterContext, t: Deno.TestContext) => Promise<void>,
): void {
  const skip = postgresSkipReason ?? (options.bucket === undefined ? undefined : swiftSkipReason);
  if (skip) console.warn(`"${name}" skipped: ${skip}`);
  Deno.test({
    name,
    ignore: skip !== undefined,
    sanitizeResources: false,
    sanitizeOps: false,
    async fn(t) {
      const [pg, swift] = await Promise.all([
        startPostgres(),
        options.bucket === undefined ? undefined : startSwift(),
      ]);
      const nodes = new Nodes();
      const cleanups: Array<() => unknown> = [];
      let db: postgres.Sql | undefined;
      let failure: { error: unknown } | undefined;
      try {
        const databaseUrl = await pg.createDatabase();
        db = postgres(databaseUrl, { max: 1, onnotice: () => {} });
        const env = {
          ...fastEnv,
          ...swift?.env(options.bucket!),
          WHARF_DATABASE_URL: databaseUrl,
          WHARF_ROOT_KEY: testRootKey(7),
          WHARF_REGISTRY_ADMIN_PASSWORD: "admin-password-1",
          WHARF_ACL_BOOTSTRAP_SECRET: rootSecret,
          WHARF_RATE_LIMIT_RPS: "0",
          ...options.env,
        };
        await fn({
          pg,
          swift,
          databaseUrl,
          db,
          env,
          spawn: (node, extra = {}) => nodes.spawn(node, { ...env, ...extra }),
          started: nodes.started,
          nodes,
          defer: (cleanup) => cleanups.unshift(cleanup),
        }, t);
      } catch (error) {
        failure = { error };
      }
      const problems = await runEach([
        ...cleanups,
        () => nodes.stop(options.stopSignal ?? "SIGTERM"),
        () => db?.end({ timeout: 1 }),
        () => Promise.all([pg.stop(), swift?.stop()]),
      ]);
      // The test's own failure is the one reported; a failed clean-up after a pass fails the test.
      if (failure) {
        if (problems.length > 0) console.error("clean-up after the failure:", ...problems);
        throw failure.error;
      }
      if (problems.length > 0) throw problems[0];
    },
  });
}

/** Runs every step in order, whatever failed before it; returns what the failed ones threw. */
async function runEach(steps: Array<() => unknown>): Promise<unknown[]> {
  const problems: unknown[] = [];
  for (const step of steps) {
    try {
      await step();
    } catch (err) {
      problems.push(err);
    }
  }
  return problems;
}
