// wharf issue #22 item 9: registry logins verify passwords in the node's bounded hashing queue (docs/security.md:
// one hash per core at a time, 64 waiting, beyond it 503). A flood of wrong-password logins from many addresses
// and names, which the login throttle lets through, gets some 503s in the registry's error shape and no 500,
// and never runs more argon2 hashes at once than the queue's concurrency.

import { assert, assertEquals } from "../helpers/assert.ts";
import { registryTest } from "./helpers.ts";

/** More than any queue's concurrency plus its 64 waiting places, all at once. */
const flood = 300;

registryTest(
  "a flood of wrong-password registry logins gets 503 busy answers, no 500, and stays in the hash bound",
  {
    // Each login comes from its own address (as through a proxy or from a botnet): the per-IP throttle
    // (50 failures) and the request rate limit do not stop the flood before the hashing queue does.
    WHARF_TRUST_PROXY: "true",
  },
  async (f) => {
    const queue = f.srv.server.passwordHashing;
    const answers = await Promise.all(
      Array.from(
        { length: flood },
        (_, i) =>
          f.api.post("/api/v1/authenticate", { user: { login: `nobody-${i}`, password: "wrong-password" } }, {
            headers: { "X-Forwarded-For": `198.51.${i >> 8}.${i & 255}` },
          }),
      ),
    );
    const counts: Record<number, number> = {};
    for (const a of answers) counts[a.status] = (counts[a.status] ?? 0) + 1;
    assertEquals(Object.keys(counts).filter((s) => s !== "401" && s !== "503"), [], JSON.stringify(counts));
    assert((counts[503] ?? 0) > 0, `no 503 among ${JSON.stringify(counts)}`);
    assert((counts[401] ?? 0) >= queue.concurrency, JSON.stringify(counts));
    for (const a of answers.filter((a) => a.status === 503)) {
      assertEquals(a.body, { errors: ["Server is busy, retry later."], success: false });
      assertEquals(a.headers.get("Retry-After"), "1");
    }
    // The queue's own counters: never more hashes at once than its concurrency; every 503 was its refusal.
    assert(queue.peakRunning <= queue.concurrency, `${queue.peakRunning} hashes ran at once`);
    assert(queue.refused >= counts[503]!, `${queue.refused} refused, ${counts[503]} answered 503`);
    // Once the flood is over the right password works again.
    assertEquals(
      (await f.api.post("/api/v1/authenticate", { user: { login: "admin", password: "admin-password-1" } }))
        .status,
      200,
    );
  },
);
