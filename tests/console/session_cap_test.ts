// Console sessions are capped per user (wharf issue #22, item 9): one account signing in again and again ends
// only its own least recently used sessions, never another user's (a global cap evicted whoever was oldest).

import { assertEquals } from "../helpers/assert.ts";
import { createUser, startRegistry } from "../registry/helpers.ts";
import { WebClient } from "./helpers.ts";

/** Whether the browser's session still opens a signed-in page (200) or is sent to the sign-in page (303). */
const tokensPage = async (web: WebClient) => (await web.get("/ui/settings/tokens")).status;

Deno.test("a user signing in past the session cap ends only their own oldest sessions", async () => {
  const perUser = 3;
  const f = await startRegistry({
    WHARF_CONSOLE_MAX_SESSIONS_PER_USER: String(perUser),
    WHARF_RATE_LIMIT_RPS: "0",
  });
  try {
    await createUser(f, "alice");
    await createUser(f, "bob");
    const alice = new WebClient(f.srv.url);
    assertEquals((await alice.signIn("alice", "alice-password")).status, 303);
    assertEquals(await tokensPage(alice), 200);
    // bob signs in from five browsers, more sessions than his cap (and than alice's and his together).
    const bob: WebClient[] = [];
    for (let i = 0; i < perUser + 2; i++) {
      const web = new WebClient(f.srv.url);
      assertEquals((await web.signIn("bob", "bob-password")).status, 303);
      bob.push(web);
    }
    const after = { alice: await tokensPage(alice), bob: [] as number[] };
    for (const web of bob) after.bob.push(await tokensPage(web));
    assertEquals(after, { alice: 200, bob: [303, 303, 200, 200, 200] });
  } finally {
    await f.stop();
  }
});
