// Group commit on PostgreSQL (lib/store/postgres/group_commit.ts) through the store of two nodes on one database:
// read-modify-write counters stay exact under many concurrent commits with overlapping and disjoint keys, a
// plan that throws leaves its batch alone, a database error fails its whole batch (503, nothing visible), and a
// COMMIT whose answer was lost is resolved (acknowledged when it happened, 503 when it did not).

import { assert, assertEquals, assertRejects } from "../helpers/assert.ts";
import { DataDir } from "../../lib/store/mod.ts";
import type { PgLog } from "../../lib/store/postgres/mod.ts";
import { StorageUnavailableError } from "../../lib/store/errors.ts";
import { ApiError } from "../../lib/errors.ts";
import { type PostgresServer, postgresSkipReason, startPostgres } from "../fixtures/postgres.ts";
import { startCommitCutProxy } from "../fixtures/commit_cut_proxy.ts";
import { eventually, testRootKey } from "./helpers.ts";
import { ensureSchema } from "../../lib/store/postgres/schema.ts";
import { latestSchemaVersion, migrations } from "../../lib/store/postgres/migrations.ts";
import postgres from "postgres";

if (postgresSkipReason) console.warn(`group commit tests skipped: ${postgresSkipReason}`);
const rootKey = testRootKey(9);
const counters = "test/counters";

let pg: PostgresServer | undefined;

interface Cluster {
  a: DataDir;
  b: DataDir;
  admin: postgres.Sql;
  url: string;
  /** Every batch node `b` applied, in the order it applied them. */
  seenOnB: Array<{ index: number; line: string }>;
}

/** A Deno.test on a fresh database of this file's one PostgreSQL server (the last test stops it). */
function databaseTest(name: string, fn: (url: string) => Promise<void>) {
  Deno.test({
    name: `group commit: ${name}`,
    ignore: postgresSkipReason !== undefined,
    sanitizeResources: false,
    sanitizeOps: false,
    async fn() {
      pg ??= await startPostgres();
      await fn(await pg.createDatabase());
    },
  });
}

/** A test on two nodes' stores on a fresh database, node `a` connecting through `viaUrl` if given. */
function test(
  name: string,
  fn: (c: Cluster) => Promise<void>,
  options: { viaUrl?: (url: string) => string } = {},
) {
  databaseTest(name, async (url) => {
    const dirs: string[] = [];
    const open = async (at: string) => {
      const dir = await Deno.makeTempDir({ prefix: "wharf-gc-" });
      dirs.push(dir);
      return await DataDir.open(dir, { checkpointMs: 60_000, databaseUrl: at, rootKey });
    };
    const a = await open(options.viaUrl?.(url) ?? url);
    const b = await open(url);
    const seenOnB: Cluster["seenOnB"] = [];
    b.log.subscribe((batch) => seenOnB.push({ index: batch.index, line: JSON.stringify(batch.record) }));
    const admin = postgres(url, { max: 1, onnotice: () => {} });
    try {
      // Both nodes listen before the test commits (else their first batches arrive by the poll).
      await eventually("both nodes listen", async () => {
        const [row] =
          await admin`SELECT count(*)::int AS n FROM pg_stat_activity WHERE query ILIKE 'listen%'`;
        return row!.n >= 2 || undefined;
      });
      await fn({ a, b, admin, url, seenOnB });
    } finally {
      await a.close({ checkpoint: false }).catch(() => {});
      await b.close({ checkpoint: false }).catch(() => {});
      await admin.end();
      for (const d of dirs) await Deno.remove(d, { recursive: true });
    }
  });
}

/** Adds 1 to each counter in `ids` from the value this node's view holds, under their keys (through the store). */
function increment(data: DataDir, ids: string[], sharedLocks: string[] = []) {
  return data.store.transact(ids.map((id) => `${counters}/${id}`), () => ({
    writes: ids.map((id) => ({
      collection: counters,
      id,
      doc: { n: (data.store.get<{ n: number }>(counters, id)?.doc.n ?? 0) + 1 },
    })),
    events: [{ Topic: "Test", Type: "Increment", Key: ids.join(","), Payload: {} }],
  }), { sharedLocks });
}

/**
 * The same straight through the log's locked(), past the store's in-process locks: only the batcher keeps two
 * commits on one key apart here.
 */
function incrementViaLog(data: DataDir, ids: string[], sharedKeys: string[] = []) {
  return data.log.locked!(ids.map((id) => `${counters}/${id}`), sharedKeys, async (append) => {
    const docs = ids.map((id) => {
      const cur = data.store.get<{ n: number }>(counters, id);
      return { c: counters, id, v: (cur?.version ?? 0) + 1, d: { n: (cur?.doc.n ?? 0) + 1 } };
    });
    return (await append(() => ({ Events: [], Docs: docs }))).index;
  });
}

function value(data: DataDir, id: string): number | undefined {
  return data.store.get<{ n: number }>(counters, id)?.doc.n;
}

/** Every row of the log table, in index order, asserting indexes are gapless. */
async function logRows(admin: postgres.Sql): Promise<Array<{ index: number; line: string }>> {
  const rows = await admin`SELECT idx, line FROM wharf_log ORDER BY idx`;
  const out = rows.map((r) => ({ index: Number(r.idx), line: r.line as string }));
  out.forEach((r, i) => assertEquals(r.index, i + 1, "indexes are gapless from 1"));
  const [head] = await admin`SELECT last FROM wharf_head`;
  assertEquals(Number(head!.last), out.length, "the head is the last row");
  return out;
}

/** Node b applies exactly the table's rows, in index order, with the same records. */
async function assertSameStreamOnB(c: Cluster): Promise<void> {
  const rows = await logRows(c.admin);
  await eventually("node b caught up", () => Promise.resolve(c.b.log.lastIndex === rows.length || undefined));
  assertEquals(
    c.seenOnB,
    rows.map((r) => ({ index: r.index, line: JSON.stringify(JSON.parse(r.line)) })),
  );
}

function stats(data: DataDir): { batches: number; members: number } {
  return (data.log as PgLog).commitStats;
}

test("counters stay exact under concurrent commits with overlapping, disjoint and shared keys", async (c) => {
  const work: Array<Promise<unknown>> = [];
  const expected = new Map<string, number>();
  const count = (ids: string[]) => ids.forEach((id) => expected.set(id, (expected.get(id) ?? 0) + 1));
  for (let i = 0; i < 240; i++) {
    const node = i % 3 === 2 ? c.b : c.a;
    // Pairs of overlapping counters, single disjoint ones, and a gate some take shared and a few exclusively.
    const ids = i % 4 === 0 ? [`p${i % 5}`, `p${(i + 1) % 5}`] : i % 4 === 1 ? [`d${i}`] : [`q${i % 7}`];
    const gate = i % 4 === 2 ? [`${counters}/gate`] : [];
    if (i % 30 === 29) {
      count(["gate"]);
      work.push(incrementViaLog(node, ["gate"]));
      continue;
    }
    count(ids);
    work.push(i % 2 === 0 ? incrementViaLog(node, ids, gate) : increment(node, ids, gate));
  }
  await Promise.all(work);
  await assertSameStreamOnB(c);
  await eventually(
    "node a caught up",
    () => Promise.resolve(c.a.log.lastIndex === c.b.log.lastIndex || undefined),
  );
  for (const [id, n] of expected) {
    assertEquals(value(c.a, id), n, `counter ${id} on node a`);
    assertEquals(value(c.b, id), n, `counter ${id} on node b`);
  }
  const { batches, members } = stats(c.a);
  assertEquals(members, 160, "node a committed its 160 commits");
  assert(batches < members / 2, `commits were grouped (${members} commits in ${batches} batches)`);
});

test("quotes, backslashes, braces, commas, NULL, non-ASCII and long lines reach the other node intact", async (c) => {
  const nasty = [
    '"',
    "\\",
    "{",
    "}",
    ",",
    "NULL",
    "null",
    "'",
    "\n\t",
    "ü €",
    "😀",
    'a"b\\c{d},e',
    "",
    // Lines past a NOTIFY payload's 8000 bytes: the other node reads them from the table instead.
    "é".repeat(3000),
    "x".repeat(9000),
  ];
  const indexes = await Promise.all(nasty.map((text, i) =>
    c.a.store.transact([], () => ({
      writes: [{ collection: counters, id: `n${i}`, doc: { n: i, text } }],
      events: [{ Topic: "Test", Type: "Nasty", Key: text, Payload: { text } }],
    }))
  ));
  assert(stats(c.a).batches < nasty.length, "the nasty lines were inserted together");
  await assertSameStreamOnB(c);
  for (const [i, text] of nasty.entries()) {
    assertEquals(c.b.store.get<{ text: string }>(counters, `n${i}`)?.doc.text, text);
    const record = JSON.parse(c.seenOnB.find((r) => r.index === indexes[i]!.index)!.line);
    assertEquals(record.Events[0].Key, text);
  }
});

test("a plan or build that throws leaves its batch; the others commit with gapless indexes", async (c) => {
  await increment(c.a, ["x"]);
  const outcomes = await Promise.allSettled(Array.from({ length: 40 }, (_, i) => {
    if (i % 5 === 3) {
      return c.a.store.transact([`${counters}/bad${i}`], () => {
        throw new ApiError(409, "taken");
      });
    }
    if (i % 5 === 4) {
      // Fails in its build (the compare-and-set sees version 1), after its plan passed.
      return c.a.store.put(counters, "x", { n: -1 }, { ifVersion: 7 });
    }
    return increment(c.a, [`ok${i}`]);
  }));
  outcomes.forEach((o, i) => {
    if (i % 5 >= 3) assertEquals(o.status, "rejected", `commit ${i}`);
    else assertEquals(o.status, "fulfilled", `commit ${i}`);
  });
  for (let i = 0; i < 40; i++) {
    if (i % 5 === 3) assert((outcomes[i] as PromiseRejectedResult).reason instanceof ApiError);
    if (i % 5 < 3) assertEquals(value(c.a, `ok${i}`), 1);
  }
  const rows = await logRows(c.admin);
  assertEquals(rows.length, 1 + 24);
  assertEquals(value(c.a, "x"), 1);
  assert(stats(c.a).batches < stats(c.a).members / 2, "the failing plans were batched with the others");
  await assertSameStreamOnB(c);
});

test("a database error fails every member of its batch with a 503 and none is visible", async (c) => {
  await increment(c.a, ["warm"]);
  await c.admin.unsafe(
    `ALTER TABLE wharf_log ADD CONSTRAINT no_poison CHECK (line NOT LIKE '%poison%') NOT VALID`,
  );
  // The first two commits start a batch each at once; the rest gather into the next batch behind them.
  const outcomes = await Promise.allSettled(
    Array.from({ length: 20 }, (_, i) => increment(c.a, [i === 10 ? "poison" : `m${i}`])),
  );
  const failed = outcomes.flatMap((o, i) => o.status === "rejected" ? [i] : []);
  assert(failed.includes(10), "the poisoned commit failed");
  assert(failed.length > 1, "its batch mates failed with it");
  for (const i of failed) {
    const reason = (outcomes[i] as PromiseRejectedResult).reason;
    assert(reason instanceof StorageUnavailableError && reason.engine === "database", String(reason));
    assertEquals(value(c.a, i === 10 ? "poison" : `m${i}`), undefined);
  }
  await c.admin.unsafe(`ALTER TABLE wharf_log DROP CONSTRAINT no_poison`);
  await increment(c.a, ["after"]);
  const rows = await logRows(c.admin);
  assertEquals(rows.length, 1 + (20 - failed.length) + 1);
  assert(!rows.some((r) => /poison|"m(\d+)"/.test(r.line) && failed.some((i) => r.line.includes(`"m${i}"`))));
  await assertSameStreamOnB(c);
  for (const i of failed) assertEquals(value(c.b, i === 10 ? "poison" : `m${i}`), undefined);
});

const proxy = { cut: undefined as ReturnType<typeof startCommitCutProxy> | undefined };

test("a COMMIT whose answer is lost is acknowledged once the batch is found committed", async (c) => {
  await increment(c.a, ["before"]);
  const cut = proxy.cut!.cutNextCommit();
  const committed = await increment(c.a, ["lost-answer"]);
  await cut; // the answer to that COMMIT never reached node a
  assertEquals(value(c.a, "lost-answer"), 1);
  assertEquals((await logRows(c.admin)).length, committed.index);
  await increment(c.a, ["after"]);
  await assertSameStreamOnB(c);
  assertEquals(value(c.b, "lost-answer"), 1);
}, {
  viaUrl: (url) => {
    proxy.cut?.close();
    proxy.cut = startCommitCutProxy(Number(new URL(url).port));
    return proxy.cut.via(url);
  },
});

test("a COMMIT cut off before it happened (its backend terminated) answers 503 and is not visible", async (c) => {
  await increment(c.a, ["before"]);
  // A deferred trigger sleeps inside COMMIT for one marked row: its backend is terminated meanwhile.
  await c.admin.unsafe(`
    CREATE FUNCTION slow_commit() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN IF NEW.line LIKE '%slow-commit%' THEN PERFORM pg_sleep(30); END IF; RETURN NULL; END $$`);
  await c.admin.unsafe(`
    CREATE CONSTRAINT TRIGGER slow_commit AFTER INSERT ON wharf_log DEFERRABLE INITIALLY DEFERRED
    FOR EACH ROW EXECUTE FUNCTION slow_commit()`);
  const pending = increment(c.a, ["slow-commit"]);
  const [victim] = await eventually("the COMMIT sleeps", async () => {
    const rows = await c.admin`SELECT pid FROM pg_stat_activity WHERE wait_event = 'PgSleep'`;
    return rows.length ? rows : undefined;
  });
  await c.admin`SELECT pg_terminate_backend(${victim!.pid})`;
  await assertRejects(
    () => pending,
    (e) => e instanceof StorageUnavailableError && e.engine === "database",
  );
  await c.admin.unsafe(`DROP TRIGGER slow_commit ON wharf_log`);
  await increment(c.a, ["after"]);
  assertEquals(value(c.a, "slow-commit"), undefined);
  assertEquals((await logRows(c.admin)).length, 2);
  await assertSameStreamOnB(c);
  assertEquals(value(c.b, "slow-commit"), undefined);
});

databaseTest("a database at schema 1 gains the batch column (schema 3) and takes commits", async (url) => {
  const admin = postgres(url, { max: 1, onnotice: () => {} });
  const dir = await Deno.makeTempDir({ prefix: "wharf-gc-schema-" });
  try {
    // The tables as the first release created them (schema 1), with one committed row.
    assertEquals(await ensureSchema(admin, migrations.slice(0, 1)), 1);
    await admin.unsafe(`UPDATE wharf_head SET last = 1`);
    await admin`INSERT INTO wharf_log (idx, line) VALUES (1, ${JSON.stringify({ Index: 1, Events: [] })})`;
    const data = await DataDir.open(dir, { checkpointMs: 60_000, databaseUrl: url, rootKey });
    try {
      assertEquals((await increment(data, ["after-upgrade"])).index, 2);
    } finally {
      await data.close({ checkpoint: false });
    }
    assertEquals((await admin`SELECT version FROM wharf_schema`).map((r) => r.version), [
      latestSchemaVersion,
    ]);
    const rows = await admin`SELECT idx, batch FROM wharf_log ORDER BY idx`;
    assertEquals(rows.map((r) => [Number(r.idx), r.batch === null]), [[1, true], [2, false]]);
  } finally {
    await admin.end();
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test({
  name: "group commit: the test server stops",
  ignore: postgresSkipReason !== undefined,
  sanitizeResources: false,
  sanitizeOps: false,
  async fn() {
    proxy.cut?.close();
    await pg?.stop();
  },
});
