// The registry's lock sets (routes/registry/core/locks.ts, what Registry.write and writeIn pass to the store) on one
// node and on two nodes over PostgreSQL: a scoped write in one namespace commits while a scoped write in another
// namespace is still planning, and a write on the same namespace or a global write waits for it.

import { assert, assertEquals } from "../helpers/assert.ts";
import { DataDir } from "../../lib/store/mod.ts";
import { registryLock, registryLockSet } from "../../routes/registry/core/locks.ts";
import { postgresSkipReason, startPostgres } from "../fixtures/postgres.ts";
import { testRootKey } from "./helpers.ts";

const rootKey = testRootKey(32);
const collection = "test/registry-locks";

/**
 * Commits one document under the registry's lock set for `namespaces` (global when undefined); its plan (which runs
 * once the locks are held) calls `planning` and then waits for `gate`.
 */
function registryWrite(
  data: DataDir,
  id: string,
  namespaces: string[] | undefined,
  gate?: { planning(): void; open: Promise<void> },
) {
  const { locks, sharedLocks } = registryLockSet(namespaces?.map(registryLock.namespace));
  return data.store.transact(locks, async () => {
    gate?.planning();
    await gate?.open;
    return { writes: [{ collection, id, doc: { at: Date.now() } }] };
  }, { sharedLocks });
}

async function scenario(a: DataDir, b: DataDir): Promise<void> {
  const done: string[] = [];
  const track = (name: string, p: Promise<unknown>) => p.then(() => void done.push(name));
  let open!: () => void;
  let planning!: () => void;
  const planned = new Promise<void>((r) => (planning = r));
  const gate = { planning, open: new Promise<void>((r) => (open = r)) };
  // A long write in namespace alpha on node a: its plan waits for the gate, holding alpha's key.
  const long = track("alpha (long)", registryWrite(a, "long", ["alpha"], gate));
  await planned;
  // A write in namespace beta on node b commits meanwhile (the gate opens only after it did).
  const other = await Promise.race([
    registryWrite(b, "beta", ["beta"]).then(() => "beta committed"),
    long.then(() => "the long write ended first"),
  ]);
  assertEquals(other, "beta committed");
  assertEquals(done.length, 0);
  // A global write, then a write in alpha (node b) wait for the long write (each alone in its batch first).
  const global = track("global", registryWrite(b, "global", undefined));
  await new Promise((r) => setTimeout(r, 300));
  assertEquals(done.length, 0, "a global write ended while a scoped write planned");
  const same = track("alpha (second)", registryWrite(b, "alpha-2", ["alpha"]));
  await new Promise((r) => setTimeout(r, 300));
  assertEquals(done.length, 0, "a write needing alpha or the global key ended while alpha's write planned");
  open();
  await Promise.all([long, same, global]);
  assertEquals(done[0], "alpha (long)", JSON.stringify(done));
  assert(done.includes("alpha (second)") && done.includes("global"), JSON.stringify(done));
  assert(a.store.get(collection, "long"));
  for (const id of ["beta", "alpha-2", "global"]) assert(b.store.get(collection, id), id);
}

Deno.test("registry lock sets on one node: scoped writes in different namespaces run together", async () => {
  const dir = await Deno.makeTempDir({ prefix: "wharf-reglocks-" });
  const data = await DataDir.open(dir, { checkpointMs: 60_000, rootKey });
  try {
    await scenario(data, data);
  } finally {
    await data.close();
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test({
  name: "registry lock sets on two nodes over PostgreSQL: scoped writes in different namespaces run together",
  ignore: postgresSkipReason !== undefined,
  sanitizeResources: false,
  sanitizeOps: false,
  async fn() {
    const pg = await startPostgres();
    const dirs: string[] = [];
    const opened: DataDir[] = [];
    try {
      const url = await pg.createDatabase();
      for (let i = 0; i < 2; i++) {
        const dir = await Deno.makeTempDir({ prefix: "wharf-reglocks-" });
        dirs.push(dir);
        opened.push(await DataDir.open(dir, { checkpointMs: 60_000, databaseUrl: url, rootKey }));
      }
      await scenario(opened[0]!, opened[1]!);
    } finally {
      for (const d of opened) await d.close({ checkpoint: false }).catch(() => {});
      for (const d of dirs) await Deno.remove(d, { recursive: true });
      await pg.stop();
    }
  },
});
