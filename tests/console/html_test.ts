// Unit tests of the console's safe-by-construction pieces: the escaping template, link and redirect guards,
// cookie parsing and attributes, and session expiry without HTTP.

import { assert, assertEquals } from "../helpers/assert.ts";
import { formatBytes, html, safeHref, seg, trusted } from "../../routes/console/html.ts";
import { safeNext } from "../../routes/console/pages_login.ts";
import {
  cookieHeader,
  readCookie,
  SESSIONS,
  Sessions,
  type SessionTimes,
} from "../../routes/console/session.ts";
import { DataDir } from "../../lib/store/mod.ts";

Deno.test("html escapes every interpolated value, nested fragments and lists once", () => {
  const evil = `<script>alert("x")</script>&'`;
  assertEquals(
    html`<p title="${evil}">${evil}</p>`.value,
    `<p title="&lt;script&gt;alert(&quot;x&quot;)&lt;/script&gt;&amp;&#39;">&lt;script&gt;alert(&quot;x&quot;)&lt;/script&gt;&amp;&#39;</p>`,
  );
  const inner = html`<b>${"<i>"}</b>`;
  assertEquals(
    html`<div>${inner}${[inner, "<u>"]}</div>`.value,
    "<div><b>&lt;i&gt;</b><b>&lt;i&gt;</b>&lt;u&gt;</div>",
  );
  assertEquals(html`${null}${undefined}${false}${0}`.value, "0");
  assertEquals(html`${trusted("<em>ok</em>")}`.value, "<em>ok</em>");
});

Deno.test("links: only http(s) targets, encoded path segments", () => {
  assertEquals(safeHref("javascript:alert(1)"), "#");
  assertEquals(safeHref(" data:text/html,x"), "#");
  assertEquals(safeHref("https://example.com/a.box"), "https://example.com/a.box");
  assertEquals(seg("a/b?c"), "a%2Fb%3Fc");
  assertEquals(formatBytes(3_145_745), "3.1 MB");
});

Deno.test("sign-in redirects stay on this site", () => {
  assertEquals(safeNext("/alice/boxes/devbox?x=1"), "/alice/boxes/devbox?x=1");
  for (
    const bad of [
      "//evil.example/",
      "/\\evil.example",
      "https://evil.example/",
      "javascript:alert(1)",
      "",
      null,
    ]
  ) {
    assertEquals(safeNext(bad), "/", String(bad));
  }
});

Deno.test("cookies: parsed by name, set HttpOnly and SameSite=Lax, Secure when asked", () => {
  const request = new Request("http://x/", { headers: { Cookie: "a=1; wharf_session=abc; b=2" } });
  assertEquals(readCookie(request, "wharf_session"), "abc");
  assertEquals(readCookie(request, "missing"), undefined);
  assertEquals(cookieHeader("s", "v", false), "s=v; Path=/; HttpOnly; SameSite=Lax");
  assertEquals(cookieHeader("s", "", true, 0), "s=; Path=/; HttpOnly; SameSite=Lax; Secure; Max-Age=0");
});

/** Sessions on a fresh data directory (the store and keyring a server gives them). */
async function withSessions(
  times: SessionTimes,
  fn: (sessions: Sessions, stored: () => number) => Promise<void>,
): Promise<void> {
  const dir = await Deno.makeTempDir({ prefix: "wharf-sessions-" });
  const data = await DataDir.open(dir, { checkpointMs: 60_000 });
  try {
    await fn(new Sessions(data.store, data.keys, times), () => [...data.store.list(SESSIONS)].length);
  } finally {
    await data.close();
    await Deno.remove(dir, { recursive: true });
  }
}

Deno.test("sessions: looked up by cookie, rotated on a new sign-in, ended when idle or too old", async () => {
  await withSessions({ idleMs: 40, absoluteMs: 1000 }, async (sessions, stored) => {
    const first = await sessions.create("alice", "hash");
    assertEquals(sessions.lookup(first.cookie)?.userKey, "alice");
    const second = await sessions.create("alice", "hash", first.cookie);
    assert(second.cookie !== first.cookie && second.session.csrf !== first.session.csrf);
    assertEquals(sessions.lookup(first.cookie), undefined);
    assertEquals(
      sessions.lookup(second.cookie)?.csrf,
      second.session.csrf,
      "the CSRF token comes with the cookie",
    );
    await new Promise((r) => setTimeout(r, 60));
    assertEquals(sessions.lookup(second.cookie), undefined, "idle");
    assertEquals(stored(), 1, "the rotated-out session was deleted at sign-in");
    await sessions.sweep();
    assertEquals(stored(), 0, "the sweep deletes expired sessions");
    assert(
      !sessions.checkCsrf("abc", undefined) && !sessions.checkCsrf("abc", "abd") &&
        sessions.checkCsrf("abc", "abc"),
    );
  });
  await withSessions({ idleMs: 1000, absoluteMs: 30 }, async (old) => {
    const s = await old.create("bob", "hash");
    await new Promise((r) => setTimeout(r, 40));
    assertEquals(old.lookup(s.cookie), undefined, "absolute");
  });
});

Deno.test("sessions: what a page leaves for the next is stored sealed, a changed password ends them", async () => {
  await withSessions({ idleMs: 60_000, absoluteMs: 600_000 }, async (sessions) => {
    const { cookie } = await sessions.create("carol", "hash-1", undefined, { flash: "Signed in." });
    const seen = sessions.lookup(cookie)!;
    assertEquals(seen.flash, "Signed in.");
    seen.flash = undefined;
    seen.shownOnce = { label: "Your new token", value: "wharf_secret-token-value" };
    await sessions.save(seen);
    const next = sessions.lookup(cookie)!;
    assertEquals([next.flash, next.shownOnce?.value], [undefined, "wharf_secret-token-value"]);
    assert(sessions.signedInWith(next, "hash-1") && !sessions.signedInWith(next, "hash-2"));
    await sessions.end(next);
    assertEquals(sessions.lookup(cookie), undefined);
  });
});
