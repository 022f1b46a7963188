// wharf issue #22 item 9: the web console's sign-in verifies passwords in the node's bounded hashing queue
// (docs/security.md). A flood of wrong sign-ins from many addresses gets 503 pages (HTML, with Retry-After) once
// the queue is full, never a 500, and never more argon2 hashes at once than the queue's concurrency.

import { assert, assertEquals } from "../helpers/assert.ts";
import { withStarted } from "../helpers/fixture.ts";
import { startRegistry } from "../registry/helpers.ts";
import { WebClient } from "./helpers.ts";

const flood = 300;

Deno.test("a flood of wrong console sign-ins gets 503 pages, no 500, and stays in the hash bound", () =>
  // Each sign-in from its own address: the per-IP login throttle does not stop the flood first.
  withStarted(() => startRegistry({ WHARF_TRUST_PROXY: "true" }), async (f) => {
    const queue = f.srv.server.passwordHashing;
    const browser = new WebClient(f.srv.url);
    await browser.get("/ui/login");
    const answers = await Promise.all(Array.from({ length: flood }, (_, i) =>
      browser.postForm("/ui/login", { login: `nobody-${i}`, password: "wrong-password", next: "/" }, {
        "X-Forwarded-For": `198.51.${i >> 8}.${i & 255}`,
      })));
    const counts: Record<number, number> = {};
    for (const a of answers) {
      counts[a.status] = (counts[a.status] ?? 0) + 1;
    }
    assertEquals(
      Object.keys(counts).filter((s) =>
        s !== "401" && s !== "503"
      ),
      [],
      JSON.stringify(counts),
    );
    assert((counts[503] ?? 0) > 0, `no 503 among ${JSON.stringify(counts)}`);
    for (const a of answers.filter((a) => a.status === 503)) {
      assert(a.headers.get("content-type")!.startsWith("text/html"), a.headers.get("content-type")!);
      assert(a.text.includes("Server is busy, retry later."), a.text.slice(0, 500));
      assertEquals(a.headers.get("Retry-After"), "1");
    }
    assert(queue.peakRunning <= queue.concurrency, `${queue.peakRunning} hashes ran at once`);
    // Once the flood is over, signing in works.
    assertEquals((await browser.signIn("admin", "admin-password-1")).status, 303);
  }));
