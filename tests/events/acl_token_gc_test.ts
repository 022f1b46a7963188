// Expired ACL tokens are garbage-collected by the periodic sweep, a batch per sweep, each with its ACLTokenDeleted
// event once; on PostgreSQL two nodes sweep every 20 ms, so their sweeps race for the same tokens
// (docs/events.md#token-expiry-and-garbage-collection).

import { assert, assertEquals, assertThrows } from "../helpers/assert.ts";
import type { AppContext } from "../../lib/app.ts";
import { ConfigError } from "../../lib/errors.ts";
import { loadEventsSettings } from "../../routes/events/settings.ts";
import type { TestServer } from "../helpers/server.ts";
import { oneTimeCollection } from "../../routes/events/acl_onetime.ts";
import {
  call,
  createToken,
  type Frame,
  putPolicy,
  rootSecret,
  startEventsServer,
  subscribe,
} from "./stream_helpers.ts";

const shortTokens = 10;
const batch = 4;
const thresholdMs = 6_000;
const gcEnv = {
  WHARF_ACL_TOKEN_MIN_TTL: "1s",
  WHARF_ACL_TOKEN_GC_THRESHOLD: `${thresholdMs}ms`,
  WHARF_ACL_TOKEN_GC_INTERVAL: "20ms",
  WHARF_ACL_TOKEN_GC_BATCH: String(batch),
};

type Stub = { AccessorID: string };
const listed = async (url: string) => {
  const r = await call(url, "GET", "/v1/acl/tokens", { token: rootSecret });
  assertEquals(r.status, 200, r.text);
  return new Set((r.json as Stub[]).map((s) => s.AccessorID));
};
const read = (url: string, accessor: string) =>
  call(url, "GET", `/v1/acl/token/${accessor}`, { token: rootSecret });

Deno.test("expired ACL tokens are deleted by the sweep, a batch at a time, each with one event", async (t) => {
  const srv = await startEventsServer({ ...gcEnv, WHARF_NODE_NAME: "gc-a" });
  const nodes: TestServer[] = [srv];
  try {
    // On PostgreSQL a second node shares the log and sweeps the same tokens at the same time.
    if (srv.env.WHARF_DATABASE_URL) {
      nodes.push(
        await startEventsServer(
          { ...srv.env, WHARF_NODE_NAME: "gc-b" },
          await Deno.makeTempDir({ prefix: "gc-b" }),
        ),
      );
    }
    await putPolicy(srv.url, "ci", 'node { policy = "read" }');
    const stream = await subscribe(srv.url, "topic=ACLToken");
    const started = Date.now();
    const short: Array<{ AccessorID: string; SecretID: string }> = [];
    for (let i = 0; i < shortTokens; i++) {
      short.push(await createToken(srv.url, ["ci"], { ExpirationTTL: "1s" }));
    }
    const issued = await call(srv.url, "PUT", "/v1/acl/token/onetime", { token: short[0]!.SecretID });
    assertEquals(issued.status, 200, issued.text);
    const oneTimeSecret = (issued.json as { OneTimeToken: { OneTimeSecretID: string } }).OneTimeToken
      .OneTimeSecretID;
    const hourLong = await createToken(srv.url, ["ci"], { ExpirationTTL: "1h" });
    const lasting = await createToken(srv.url, ["ci"]);
    const createdBy = Date.now();

    await t.step("expired but younger than the threshold: listed, readable, refused as expired", async () => {
      await new Promise((r) => setTimeout(r, Math.max(0, createdBy + 1_200 - Date.now())));
      assert(Date.now() - started < thresholdMs - 1_000, "checked before any token reached the threshold");
      const ids = await listed(srv.url);
      for (const tok of short) {
        assert(ids.has(tok.AccessorID));
        assertEquals((await read(srv.url, tok.AccessorID)).status, 200);
      }
      const self = await call(srv.url, "GET", "/v1/acl/token/self", { token: short[1]!.SecretID });
      assertEquals([self.status, self.text], [403, "ACL token expired"]);
    });

    await t.step("past the threshold: gone from reads and the list; the unexpired ones stay", async () => {
      const deadline = Date.now() + 30_000;
      for (
        let ids = await listed(srv.url);
        short.some((tok) => ids.has(tok.AccessorID));
        ids = await listed(srv.url)
      ) {
        assert(Date.now() < deadline, "expired tokens still listed after 30 s");
        await new Promise((r) => setTimeout(r, 200));
      }
      for (const node of nodes) {
        const ids = await listed(node.url);
        for (const tok of short) {
          assert(!ids.has(tok.AccessorID), `${tok.AccessorID} still listed on ${node.url}`);
          const r = await read(node.url, tok.AccessorID);
          assertEquals([r.status, r.text], [404, "ACL token not found"]);
        }
        for (const tok of [hourLong, lasting]) {
          assert(ids.has(tok.AccessorID));
          assertEquals((await read(node.url, tok.AccessorID)).status, 200);
          const self = await call(node.url, "GET", "/v1/acl/token/self", { token: tok.SecretID });
          assertEquals(self.status, 200, self.text);
        }
      }
      const stale = await call(srv.url, "GET", "/v1/acl/token/self", { token: short[1]!.SecretID });
      assertEquals([stale.status, stale.text], [403, "ACL token not found"]);
    });

    await t.step("the token's one-time token went with it", async () => {
      for (const node of nodes) {
        assertEquals(node.server.data.store.get(oneTimeCollection, short[0]!.AccessorID), undefined);
      }
      const r = await call(srv.url, "POST", "/v1/acl/token/onetime/exchange", {
        body: { OneTimeSecretID: oneTimeSecret },
      });
      assertEquals([r.status, r.text], [403, "Permission denied"]);
    });

    await t.step(
      "one ACLTokenDeleted event per token, at most a batch per commit, over several sweeps",
      async () => {
        const frames: Frame[] = await stream.dataUntilQuiet(1_500);
        await stream.close();
        const deletions = frames.map((f) => f.Events!.filter((e) => e.Type === "ACLTokenDeleted")).filter((
          d,
        ) => d.length);
        const keys = deletions.flat().map((e) => e.Key).sort();
        assertEquals(keys, short.map((tok) => tok.AccessorID).sort(), "each expired token deleted once");
        for (const d of deletions) assert(d.length <= batch, `a commit deleted ${d.length} tokens`);
        assert(deletions.length >= Math.ceil(shortTokens / batch), `${deletions.length} commits`);
        for (const e of deletions.flat()) {
          const payload = (e.Payload as { ACLToken: { AccessorID: string; SecretID: string } }).ACLToken;
          assertEquals([payload.AccessorID, payload.SecretID], [e.Key, ""]);
        }
      },
    );
  } finally {
    for (const node of nodes.reverse()) await node.stop();
  }
});

Deno.test("the sweep's settings: Nomad's defaults; an interval setInterval cannot keep, or a batch too big, is refused", () => {
  const load = (env: Record<string, string>) =>
    loadEventsSettings({ config: { env } } as unknown as AppContext);
  assertEquals(load({}).tokenGc, { intervalMs: 300_000, thresholdMs: 3_600_000, batch: 1000 });
  for (
    const [name, value] of [
      ["WHARF_ACL_TOKEN_GC_INTERVAL", "0"],
      ["WHARF_ACL_TOKEN_GC_INTERVAL", "25d"],
      ["WHARF_ACL_TOKEN_GC_BATCH", "0"],
      ["WHARF_ACL_TOKEN_GC_BATCH", "4097"],
      ["WHARF_ACL_TOKEN_GC_THRESHOLD", "soon"],
    ]
  ) {
    const err = assertThrows(() => load({ [name!]: value! }));
    assert(err instanceof ConfigError && err.message.startsWith(name!), String(err));
  }
});
