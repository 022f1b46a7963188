// PostgreSQL or the object store unreachable: writes answer 503 with Retry-After in the API family's shape,
// /health says which engine is down, and everything recovers by itself once the engine is back; the node (a real
// process) never exits meanwhile.

import { assert, assertEquals } from "../helpers/assert.ts";
import { Client as RegistryClient } from "../registry/helpers.ts";
import { adminPassword, Client as AuthClient, login } from "../authmethods/helpers.ts";
import { nodeEvent, rootSecret } from "../events/stream_helpers.ts";
import { WebClient } from "../console/helpers.ts";
import { clusterTest, eventually } from "./helpers.ts";

/** The engines take seconds to come back: poll for 20 s, every 100 ms. */
const recovered = <T>(what: string, fn: () => Promise<T | undefined>) => eventually(what, fn, 20_000, 100);

clusterTest(
  "PostgreSQL or S3 down → 503 + Retry-After in each family's shape, /health degraded, then recovery",
  { bucket: "wharf-faults", env: { WHARF_DOWNLOADS: "proxy" } },
  async (cluster) => {
    const srv = await cluster.spawn("node-a");
    const url = srv.url;
    const registry = new RegistryClient(url);
    const admin = await registry.login("admin", "admin-password-1");
    const anon = new AuthClient(url);
    const scope = await anon.get("/v1/auth-methods?scope_id=global");
    const primary = scope.body.items.find((m: { is_primary?: boolean }) => m.is_primary);
    const auth = new AuthClient(url, await login(anon, primary.id, "admin", adminPassword));
    const health = async () => await (await fetch(`${url}/health`)).json();
    // The only node becomes the checkpoint writer at its first maintenance tick.
    await recovered(
      "the node writes checkpoints",
      async () => (await health()).checkpoint_writer || undefined,
    );
    assertEquals(await health(), {
      status: "ok",
      node: "node-a",
      index: (await health()).index,
      checkpoint_index: (await health()).checkpoint_index,
      database: "up",
      lag: 0,
      checkpoint_writer: true,
      object_store: "up",
    });

    // A hosted box, uploaded to the object store.
    const V = "/api/v1/box/admin/devbox/version/1.0.0";
    assertEquals((await registry.post("/api/v1/boxes", { name: "devbox" }, { token: admin })).status, 200);
    await registry.post("/api/v1/box/admin/devbox/versions", { version: { version: "1.0.0" } }, {
      token: admin,
    });
    await registry.post(`${V}/providers`, { provider: { name: "virtualbox" } }, { token: admin });
    const upload = async () => {
      const { upload_path } = (await registry.get(`${V}/provider/virtualbox/upload`, { token: admin })).body;
      const r = await fetch(upload_path, { method: "PUT", body: new Uint8Array(100_000).fill(1) });
      return { status: r.status, headers: r.headers, text: await r.text() };
    };
    assertEquals((await upload()).status, 200);
    // A service principal, for the token endpoint's own error shape (RFC 6749 JSON) while the database is down.
    const org = { organization: { name: "acme", members: [{ username: "admin", role: "owner" }] } };
    assertEquals((await registry.post("/api/v1/admin/organizations", org, { token: admin })).status, 200);
    const principal = await registry.post("/api/v1/admin/organizations/acme/service-principals", {
      service_principal: { name: "ci" },
    }, { token: admin });
    assertEquals(principal.status, 201, principal.text);
    const { client_id, client_secret } = principal.body;

    await cluster.pg.halt();
    const box = await registry.post("/api/v1/boxes", { name: "second" }, { token: admin });
    assertEquals(box.status, 503, box.text);
    assertEquals(box.headers.get("Retry-After"), "5");
    assertEquals(box.body.success, false);
    assert(box.body.errors[0].includes("database"));
    const method = await auth.post("/v1/auth-methods", {
      scope_id: "global",
      type: "password",
      version: 0,
    });
    assertEquals(method.status, 503);
    assertEquals(method.headers.get("Retry-After"), "5");
    assertEquals(typeof method.body.kind, "string");
    assert(method.body.message.includes("database"));
    const published = await fetch(`${url}/v1/event/publish`, {
      method: "POST",
      headers: { "X-Nomad-Token": rootSecret },
      body: JSON.stringify({ Events: [nodeEvent("n1")] }),
    });
    assertEquals(published.status, 503);
    assertEquals(published.headers.get("Retry-After"), "5");
    assertEquals(await published.text(), "the database is unreachable; retry shortly");
    const token = await fetch(`${url}/oauth2/token`, {
      method: "POST",
      headers: { "Content-Type": "application/x-www-form-urlencoded" },
      body: new URLSearchParams({ grant_type: "client_credentials", client_id, client_secret }),
    });
    assertEquals(token.status, 503);
    assertEquals(token.headers.get("Retry-After"), "5");
    assertEquals(await token.json(), {
      error: "temporarily_unavailable",
      error_description: "the database is unreachable; retry shortly",
    });
    // The console signs in by storing a session: its 503 page says why.
    const signIn = await new WebClient(url).signIn("admin", "admin-password-1");
    assertEquals(signIn.status, 503, signIn.text);
    assertEquals(signIn.headers.get("Retry-After"), "5");
    assert(signIn.text.includes("the database is unreachable; retry shortly"), signIn.text);
    // Reads are served from memory meanwhile.
    assertEquals((await registry.get("/api/v1/box/admin/devbox", { token: admin })).status, 200);
    await recovered("health says the database is down", async () => {
      const h = await health();
      return h.status === "degraded" && h.database === "down" ? h : undefined;
    });

    await cluster.pg.start();
    await recovered("writes succeed again", async () => {
      const r = await registry.post("/api/v1/boxes", { name: "second" }, { token: admin });
      return r.status === 200 ? r : undefined;
    });
    await recovered("health ok again", async () => ((await health()).status === "ok" ? true : undefined));

    await cluster.swift!.haltProxy();
    const failed = await upload();
    assertEquals(failed.status, 503, failed.text);
    assertEquals(failed.headers.get("Retry-After"), "5");
    assertEquals(JSON.parse(failed.text).success, false);
    const download = await fetch(`${url}/admin/boxes/devbox/versions/1.0.0/providers/virtualbox.box`, {
      headers: { Authorization: `Bearer ${admin}` },
    });
    await download.body?.cancel();
    assertEquals(download.status, 503);
    assertEquals((await health()).object_store, "down");
    await cluster.swift!.startProxy();
    const again = await upload();
    assertEquals(again.status, 200, again.text);
    assertEquals((await health()).status, "ok");
    // The node stops cleanly after all that.
    srv.kill("SIGTERM");
    assertEquals((await srv.status).code, 0, srv.stderr());
  },
);
