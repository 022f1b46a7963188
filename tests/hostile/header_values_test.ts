// Header values Deno refuses end the process (issue #22, item 1): a provider URL and the console's sign-in
// `next` with a control character, a URL stored before validation, and the router's last guard. Every server
// here is a child process, so a crash fails the test instead of ending the test runner.

import { assert, assertEquals } from "../helpers/assert.ts";
import { type ChildServer, spawnServer, startTestServer } from "../helpers/server.ts";
import { openStoredData } from "../helpers/stored.ts";
import { testStorageEnv } from "../helpers/storage_backend.ts";
import { ADMIN_PASSWORD, Client, createUser, type Fixture } from "../registry/helpers.ts";
import { WebClient } from "../console/helpers.ts";
import { fieldNames, minimalOidcAttrs, withAuthServer } from "../authmethods/helpers.ts";

const V1 = "/api/v1/box/alice/devbox/version/1.0.0";
const V2 = "/api/v2/box/alice/devbox/version/1.0.0";
const DOWNLOAD = "/alice/boxes/devbox/versions/1.0.0/providers/virtualbox.box";

/** A child wharf on a fresh data dir (and the test storage backend), removed afterwards. */
async function withChild(env: Record<string, string>, fn: (child: ChildServer) => Promise<void>) {
  const dir = await Deno.makeTempDir({ prefix: "wharf-headers-" });
  const child = await spawnServer(dir, { ...await testStorageEnv(), ...env });
  try {
    await fn(child);
    await assertAlive(child);
  } finally {
    child.kill();
    await child.status;
    await Deno.remove(dir, { recursive: true }).catch(() => {});
  }
}

/** The child still answers, and has not exited. */
async function assertAlive(child: ChildServer, context = "") {
  const exited = await Promise.race([
    child.status.then(() => true),
    new Promise((r) => setTimeout(r, 50, false)),
  ]);
  assert(!exited, `wharf exited ${context}; stderr: ${child.stderr().slice(-1500)}`);
  const health = await fetch(`${child.url}/health`);
  await health.body?.cancel();
  assertEquals(health.status, 200, `health ${context}`);
}

/** GET without following redirects; the status and Location, or the failure if the server died. */
async function download(url: string, method = "GET"): Promise<{ status: number; location: string | null }> {
  const r = await fetch(url, { method, redirect: "manual" });
  await r.body?.cancel();
  return { status: r.status, location: r.headers.get("Location") };
}

async function aliceWithVersion(url: string): Promise<{ api: Client; token: string }> {
  const api = new Client(url);
  const admin = await api.login("admin", ADMIN_PASSWORD);
  const token = await createUser({ api, admin } as Fixture, "alice");
  assertEquals(
    (await api.post("/api/v1/boxes", { box: { username: "alice", name: "devbox", is_private: false } }, {
      token,
    })).status,
    200,
  );
  const v = await api.post("/api/v1/box/alice/devbox/versions", { version: { version: "1.0.0" } }, { token });
  assertEquals(v.status, 200, v.text);
  return { api, token };
}

Deno.test("a provider URL with a control character or a space is refused with 422 naming Url", async () => {
  await withChild({ WHARF_REGISTRY_ADMIN_PASSWORD: ADMIN_PASSWORD }, async (child) => {
    const { api, token } = await aliceWithVersion(child.url);
    for (const bad of ["\u0001", "\u001f", "\u007f", "\u0000", "\u0085", " ", "\t", "\n"]) {
      const url = `https://files.example/a${bad}b.box`;
      const v1 = await api.post(`${V1}/providers`, { provider: { name: "virtualbox", url } }, { token });
      assertEquals(v1.status, 422, `v1 ${JSON.stringify(bad)}: ${v1.text}`);
      assertEquals(v1.body.success, false);
      assert(v1.body.errors.some((e: string) => e.startsWith("Url ")), v1.text);
      const v2 = await api.post(`${V2}/providers`, { name: "virtualbox", architecture: "amd64", url }, {
        token,
      });
      assertEquals(v2.status, 422, `v2 ${JSON.stringify(bad)}: ${v2.text}`);
      // Had it been stored, the first download would have ended the process.
      assertEquals((await download(child.url + DOWNLOAD)).status, 404);
      await assertAlive(child, `after ${JSON.stringify(bad)}`);
    }
    // An update is checked the same way, and leaves the stored URL as it was.
    const ok = await api.post(`${V1}/providers`, {
      provider: { name: "virtualbox", url: "https://files.example/a.box" },
    }, { token });
    assertEquals(ok.status, 200, ok.text);
    const put = await api.put(`${V1}/provider/virtualbox`, {
      provider: { url: "https://files.example/a\u0001b.box" },
    }, { token });
    assertEquals(put.status, 422, put.text);
    assertEquals(
      (await api.get(`${V1}/provider/virtualbox`, { token })).body.url,
      "https://files.example/a.box",
    );
  });
});

Deno.test("a provider URL is stored in its canonical, percent-encoded form and redirected to as stored", async () => {
  await withChild({ WHARF_REGISTRY_ADMIN_PASSWORD: ADMIN_PASSWORD }, async (child) => {
    const { api, token } = await aliceWithVersion(child.url);
    const given = "HTTPS://Files.Example:443/bücher/ä b%20c.box?x=€";
    const created = await api.post(`${V1}/providers`, {
      provider: { name: "virtualbox", url: given.replace(" ", "") },
    }, { token });
    assertEquals(created.status, 200, created.text);
    const canonical = "https://files.example/b%C3%BCcher/%C3%A4b%20c.box?x=%E2%82%AC";
    assertEquals(created.body.url, canonical);
    assertEquals((await api.put(`${V1}/release`, undefined, { token })).status, 200);
    assertEquals(await download(child.url + DOWNLOAD), { status: 302, location: canonical });
    assertEquals(await download(child.url + DOWNLOAD, "HEAD"), { status: 302, location: canonical });
  });
});

Deno.test("a URL stored before validation is redirected to in its canonical form after the upgrade", async () => {
  const srv = await startTestServer({ WHARF_REGISTRY_ADMIN_PASSWORD: ADMIN_PASSWORD });
  let child: ChildServer | undefined;
  try {
    const { api, token } = await aliceWithVersion(srv.url);
    const p = await api.post(`${V1}/providers`, {
      provider: { name: "virtualbox", url: "https://files.example/ab.box" },
    }, { token });
    assertEquals(p.status, 200, p.text);
    assertEquals((await api.put(`${V1}/release`, undefined, { token })).status, 200);
    await srv.server.shutdown();
    // As an older wharf accepted and stored them: control characters inside the URL.
    const data = await openStoredData(srv);
    const [stored] = [...data.store.list<Record<string, unknown>>("registry/boxes")];
    const doc = structuredClone(stored!.doc) as { versions: { providers: { url: string }[] }[] };
    doc.versions[0]!.providers[0]!.url = "https://files.example/a\u0001b\u007fc\u001fd.box";
    await data.store.transact(["registry/write"], () => ({
      writes: [{ collection: "registry/boxes", id: stored!.id, doc, ifVersion: stored!.version }],
    }));
    await data.close();
    child = await spawnServer(srv.dataDir, srv.env);
    const expected = { status: 302, location: "https://files.example/a%01b%7Fc%1Fd.box" };
    assertEquals(await download(child.url + DOWNLOAD), expected);
    assertEquals(await download(child.url + DOWNLOAD, "HEAD"), expected);
    await assertAlive(child, "after downloading a stored URL with control characters");
    // Nothing stored is lost: the API still shows the provider.
    const shown = await new Client(child.url).get(`${V1}/provider/virtualbox`);
    assertEquals(shown.status, 200, shown.text);
  } finally {
    child?.kill();
    await child?.status;
    await srv.stop();
  }
});

Deno.test("the console's sign-in `next` is kept to a canonical local path; the process lives", async () => {
  await withChild({ WHARF_REGISTRY_ADMIN_PASSWORD: ADMIN_PASSWORD }, async (child) => {
    const cases: Array<[string, string]> = [
      ["/\x01", "/"],
      ["/\x1f", "/"],
      ["/\x7f", "/"],
      ["/\0", "/"],
      ["/a b", "/"],
      ["//evil.example/x", "/"],
      ["/\\evil.example", "/"],
      ["/€", "/%E2%82%AC"],
      ["/alice/boxes/devbox?tab=a\u00e9#top", "/alice/boxes/devbox?tab=a%C3%A9#top"],
      ["/\ud800", "/%EF%BF%BD"],
    ];
    for (const [next, location] of cases) {
      const web = new WebClient(child.url);
      await web.get("/ui/login");
      const answer = await web.postForm("/ui/login", { login: "admin", password: ADMIN_PASSWORD, next });
      assertEquals(answer.status, 303, `${JSON.stringify(next)}: ${answer.text.slice(0, 300)}`);
      assertEquals(answer.headers.get("Location"), location, JSON.stringify(next));
      await assertAlive(child, `after signing in with next=${JSON.stringify(next)}`);
    }
  });
});

Deno.test("a response with a header value Deno would refuse is answered 500 and logged; the process lives", async () => {
  await withChild({ WHARF_TEST_ROUTES: "1" }, async (child) => {
    for (const value of ["%01", "%1F", "%7F", "a%0Bb"]) {
      const r = await fetch(`${child.url}/v1/_test/echo-header?value=${value}`);
      const text = await r.text();
      assertEquals(r.status, 500, `${value}: ${text}`);
      assertEquals(r.headers.get("X-Echo"), null);
      await assertAlive(child, `after a header value ${value}`);
    }
    const fine = await fetch(`${child.url}/v1/_test/echo-header?value=a%09b%C3%A9`);
    await fine.body?.cancel();
    assertEquals([fine.status, fine.headers.get("X-Echo")], [200, "a\tb\u00e9"]);
    await new Promise((r) => setTimeout(r, 100));
    assert(/response refused: a header value holds a control character/.test(child.stderr()), child.stderr());
  });
});

Deno.test("an OIDC method's api_url_prefix (the start of its login's last redirect) is refused with a control character and kept canonical", async () => {
  await withAuthServer(async (f) => {
    for (const bad of ["\u0001", "\u007f", " ", "\t"]) {
      const r = await f.admin.post("/v1/auth-methods", {
        scope_id: "global",
        type: "oidc",
        attributes: { ...minimalOidcAttrs, api_url_prefix: `https://wharf.example.com/a${bad}b` },
      });
      assertEquals(r.status, 400, `${JSON.stringify(bad)}: ${JSON.stringify(r.body)}`);
      assertEquals(r.body.kind, "InvalidArgument");
      assertEquals(fieldNames(r.body), ["attributes.api_url_prefix"]);
    }
    const r = await f.admin.post("/v1/auth-methods", {
      scope_id: "global",
      type: "oidc",
      attributes: { ...minimalOidcAttrs, api_url_prefix: "HTTPS://Wharf.Example.com:443/bücher/" },
    });
    assertEquals(r.status, 200, JSON.stringify(r.body));
    assertEquals(r.body.attributes.api_url_prefix, "https://wharf.example.com/b%C3%BCcher");
  });
});
