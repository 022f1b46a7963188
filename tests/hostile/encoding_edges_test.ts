// Hostile findings F5 (a UTF-8 byte order mark before a JSON body) and F7 (job IDs that are not well-formed
// Unicode): both are refused with each family's 400, and nothing is written.

import { assert, assertEquals } from "../helpers/assert.ts";
import { withStarted } from "../helpers/fixture.ts";
import { startTestServer, type TestServer } from "../helpers/server.ts";

const bom = new Uint8Array([0xef, 0xbb, 0xbf]);

function withBom(json: string): Uint8Array<ArrayBuffer> {
  const body = new TextEncoder().encode(json);
  const out = new Uint8Array(bom.length + body.length);
  out.set(bom);
  out.set(body, bom.length);
  return out;
}

async function send(ts: TestServer, method: string, path: string, body: BodyInit) {
  const r = await fetch(ts.url + path, { method, body, headers: { "Content-Type": "application/json" } });
  return { status: r.status, type: r.headers.get("Content-Type") ?? "", text: await r.text() };
}

/** A server with the events ACLs off (the auth and registry families need no setup for these requests). */
function withServer(fn: (ts: TestServer) => Promise<void>): Promise<void> {
  return withStarted(() => startTestServer({ WHARF_ACL_ENABLED: "false" }), fn);
}

Deno.test("a JSON body with a leading byte order mark is a 400 in every family", () =>
  withServer(async (ts) => {
    const node = await send(ts, "PUT", "/v1/node/register", withBom("{}"));
    assertEquals(node.status, 400, node.text);
    assertEquals(
      node.text,
      "Failed to decode request body: invalid character 'ï' looking for beginning of value",
    );
    assertEquals(await (await fetch(`${ts.url}/v1/nodes`)).json(), [], "no node was registered");

    const methods = await (await fetch(`${ts.url}/v1/auth-methods?scope_id=global`)).json();
    const methodId = methods.items[0].id as string;
    const login = await send(
      ts,
      "POST",
      `/v1/auth-methods/${methodId}:authenticate`,
      withBom('{"attributes":{"login_name":"admin","password":"x"}}'),
    );
    assertEquals(login.status, 400, login.text);
    assertEquals(JSON.parse(login.text).message, "Error in provided request.");

    const registry = await send(
      ts,
      "POST",
      "/api/v1/authenticate",
      withBom('{"user":{"login":"a","password":"b"}}'),
    );
    assertEquals(registry.status, 400, registry.text);
    assertEquals(JSON.parse(registry.text), { errors: ["Request body is not valid JSON"], success: false });

    // The same bodies without the mark are read as JSON (no 400).
    assertEquals((await send(ts, "PUT", "/v1/node/register", "{}")).status, 200);
  }));

Deno.test("a job ID with a lone surrogate is a 400 and does not replace its U+FFFD namesake", () =>
  withServer(async (ts) => {
    const plain = await send(ts, "PUT", "/v1/jobs", JSON.stringify({ Job: { ID: "j\ufffd" } }));
    assertEquals(plain.status, 200, plain.text);
    for (const id of ["j\ud800", "\udc00", "a\udbff"]) {
      const r = await send(ts, "PUT", "/v1/jobs", JSON.stringify({ Job: { ID: id } }));
      assertEquals(r.status, 400, r.text);
      assert(r.type.startsWith("text/plain"), r.type);
      assertEquals(r.text, "Job ID contains an unpaired surrogate (invalid Unicode)");
    }
    const jobs = await (await fetch(`${ts.url}/v1/jobs`)).json() as Array<{ ID: string }>;
    assertEquals(jobs.map((j) => j.ID), ["j\ufffd"]);
    const job = await (await fetch(`${ts.url}/v1/job/${encodeURIComponent("j\ufffd")}`)).json();
    assertEquals(job.Version, 0, "the U+FFFD job was never re-registered");
    // A well-formed pair (an emoji) is still a valid ID.
    assertEquals(
      (await send(ts, "PUT", "/v1/jobs", JSON.stringify({ Job: { ID: "j\ud83d\ude00" } }))).status,
      200,
    );
  }));
