// Crash test: a real server child process under concurrent writes, SIGKILLed at random moments.

import { assert, assertEquals } from "../helpers/assert.ts";
import { spawnServer } from "../helpers/server.ts";

const rounds = Number(Deno.env.get("WHARF_CRASH_ROUNDS") ?? 20);
const writers = 16;

interface Ack {
  /** Even writers write per-document files (items), odd ones a packed collection (packed). */
  kind: "items" | "packed";
  id: string;
  /** round * 1e6 + seq: later rounds overwrite the hot documents from seq 0 again. */
  seq: number;
  index: number;
}

async function writeLoop(url: string, writer: number, round: number, acks: Ack[], stop: { now: boolean }) {
  const kind = writer % 2 === 0 ? "items" : "packed";
  for (let seq = 0; !stop.now; seq++) {
    // Half the writes create new documents, half overwrite one hot document per writer.
    const id = seq % 2 === 0 ? `r${round}-w${writer}-s${seq}` : `hot-w${writer}`;
    try {
      const res = await fetch(`${url}/v1/_test/${kind}/${id}`, {
        method: "PUT",
        body: JSON.stringify({ round, writer, seq, pad: "x".repeat(seq % 7 * 50) }),
      });
      if (res.status === 200) {
        const body = await res.json();
        acks.push({ kind, id, seq: round * 1e6 + seq, index: body.index });
      } else await res.body?.cancel();
    } catch {
      return; // the server was killed
    }
  }
}

function readLogIndexes(dataDir: string): Map<number, string[]> {
  const byIndex = new Map<number, string[]>();
  const names = [...Deno.readDirSync(`${dataDir}/events`)].map((e) => e.name).filter((n) =>
    n.endsWith(".ndjson")
  )
    .sort();
  let previous = 0;
  for (const name of names) {
    const text = Deno.readTextFileSync(`${dataDir}/events/${name}`);
    assert(text === "" || text.endsWith("\n"), `segment ${name} ends with a complete line`);
    for (const line of text.split("\n").filter(Boolean)) {
      const record = JSON.parse(line);
      assert(record.Index > previous, `index ${record.Index} after ${previous} must increase`);
      previous = record.Index;
      byIndex.set(record.Index, record.Events.map((e: { Key: string }) => e.Key));
    }
  }
  return byIndex;
}

function walk(dir: string, out: string[] = []): string[] {
  for (const e of Deno.readDirSync(dir)) {
    const p = `${dir}/${e.name}`;
    if (e.isDirectory) walk(p, out);
    else out.push(p);
  }
  return out;
}

Deno.test({
  name: "server keeps every acknowledged write across SIGKILL at random moments",
  sanitizeResources: false,
  sanitizeOps: false,
  async fn() {
    const dataDir = await Deno.makeTempDir({ prefix: "wharf-crash-" });
    const env = {
      WHARF_TEST_ROUTES: "1",
      WHARF_CHECKPOINT_INTERVAL: "30ms",
      WHARF_EVENTS_SEGMENT_INDEXES: "500",
    };
    const acked: Ack[] = [];
    try {
      for (let round = 0; round < rounds; round++) {
        const server = await spawnServer(dataDir, env);
        // Everything acknowledged in earlier rounds must be there after the restart.
        await verifyAcked(server.url, acked);
        const stop = { now: false };
        const roundAcks: Ack[] = [];
        const loops = Array.from(
          { length: writers },
          (_, w) => writeLoop(server.url, w, round, roundAcks, stop),
        );
        await new Promise((r) => setTimeout(r, 150 + Math.random() * 600));
        server.kill("SIGKILL");
        await server.status;
        stop.now = true;
        await Promise.all(loops);
        acked.push(...roundAcks);
        await server.process.stdout.cancel().catch(() => {});
      }
      assert(acked.length > rounds * 10, `expected many acknowledged writes, got ${acked.length}`);
      const logIndexes = readLogIndexes(dataDir);
      for (const a of acked) {
        assert(
          logIndexes.get(a.index)?.includes(a.id),
          `acknowledged event ${a.index} (${a.id}) is in the log`,
        );
      }
      const final = await spawnServer(dataDir, env);
      await verifyAcked(final.url, acked);
      final.kill("SIGTERM");
      assertEquals((await final.status).code, 0);
      const files = walk(dataDir);
      assertEquals(files.filter((f) => f.endsWith(".tmp")), [], "no temp files remain");
      for (const f of files.filter((f) => f.endsWith(".json"))) JSON.parse(Deno.readTextFileSync(f));
      const packs = files.filter((f) => f.includes("/test/packed/"));
      assert(packs.length > 0 && packs.every((f) => f.endsWith(".ndjson")), `packs only: ${packs}`);
      for (const f of packs) {
        for (const line of Deno.readTextFileSync(f).split("\n").filter(Boolean)) JSON.parse(line);
      }
    } finally {
      await Deno.remove(dataDir, { recursive: true }).catch(() => {});
    }
  },
});

async function verifyAcked(url: string, acked: Ack[]) {
  const latest = new Map<string, number>();
  for (const a of acked) {
    const key = `${a.kind}/${a.id}`;
    latest.set(key, Math.max(latest.get(key) ?? -1, a.seq));
  }
  const ids = [...latest.keys()];
  for (let i = 0; i < ids.length; i += 32) {
    await Promise.all(
      ids.slice(i, i + 32).map(async (id) => {
        const res = await fetch(`${url}/v1/_test/${id}`);
        assertEquals(res.status, 200, `acknowledged document ${id} is present`);
        const stored = await res.json();
        const seq = stored.doc.round * 1e6 + stored.doc.seq;
        assert(seq >= latest.get(id)!, `${id} holds ${seq} >= acknowledged ${latest.get(id)}`);
      }),
    );
  }
}
