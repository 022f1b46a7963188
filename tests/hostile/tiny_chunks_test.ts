// Bodies sent as 1- and 2-byte chunks past 16 KiB reach their handler whole, and past the route's limit get a
// prompt refusal (413; the auth family's 400), on a JSON route of every family and on /oauth2/token (16 KiB
// limit). Before the fix each waited for the body timeout: the chunked reader left itself a view of a few
// bytes, a read Deno 2.9.6 never settles (lib/http.ts minByobRead).

import { assert, assertEquals, assertStringIncludes } from "../helpers/assert.ts";
import { spawnServer, withTimeout } from "../helpers/server.ts";

const encoder = new TextEncoder();
const adminPassword = "admin-password-1";
/** The JSON routes' limit in this test: small enough to pass it in tiny chunks quickly. */
const jsonLimit = 32 * 1024;
const oauthLimit = 16 * 1024;
/** Every answer is due well within this; the body timeout (120 s) is far beyond it. */
const answerWithinMs = 10_000;

interface Answer {
  status: number;
  body: string;
}

/**
 * POSTs `body` with chunked transfer encoding in chunks of `chunkSize` bytes, one write per chunk (a write
 * refused because the server already answered ends the sending), and reads the answer up to the close.
 */
async function postInChunks(
  baseUrl: string,
  path: string,
  headers: Record<string, string>,
  body: string,
  chunkSize: number,
): Promise<Answer> {
  const url = new URL(baseUrl);
  const conn = await Deno.connect({ hostname: url.hostname, port: Number(url.port) });
  const exchange = async (): Promise<Answer> => {
    const head = Object.entries(headers).map(([k, v]) => `${k}: ${v}\r\n`).join("");
    await conn.write(encoder.encode(
      `POST ${path} HTTP/1.1\r\nHost: ${url.host}\r\n${head}Transfer-Encoding: chunked\r\nConnection: close\r\n\r\n`,
    ));
    const bytes = encoder.encode(body);
    try {
      for (let i = 0; i < bytes.length; i += chunkSize) {
        const piece = bytes.subarray(i, i + chunkSize);
        const frame = new Uint8Array([
          ...encoder.encode(`${piece.length.toString(16)}\r\n`),
          ...piece,
          13,
          10,
        ]);
        await conn.write(frame);
      }
      await conn.write(encoder.encode("0\r\n\r\n"));
    } catch {
      // the server answered (413) and closed before the whole body was sent
    }
    const text = new TextDecoder().decode(await new Response(conn.readable).arrayBuffer());
    const [statusLine = "", ...rest] = text.split("\r\n");
    return {
      status: Number(statusLine.split(" ")[1]),
      body: rest.join("\r\n").split("\r\n\r\n").slice(1).join(""),
    };
  };
  try {
    return await withTimeout(
      exchange(),
      answerWithinMs,
      `POST ${path} in ${chunkSize}-byte chunks (${body.length} bytes): no answer within ${answerWithinMs} ms`,
    );
  } finally {
    try {
      conn.close();
    } catch {
      // closed by the readable's end
    }
  }
}

/** `json` after enough leading spaces to make `size` bytes: only a handler given the whole body sees the JSON. */
function padded(json: string, size: number): string {
  return " ".repeat(size - json.length) + json;
}

/** A chunked answer body's data (this server chunks answers of unknown length). */
function dechunk(body: string): string {
  if (!/^[0-9a-f]+\r\n/i.test(body)) return body;
  let out = "";
  let rest = body;
  while (true) {
    const m = /^([0-9a-f]+)\r\n/i.exec(rest);
    if (!m) break;
    const n = parseInt(m[1]!, 16);
    if (n === 0) break;
    out += rest.slice(m[0].length, m[0].length + n);
    rest = rest.slice(m[0].length + n + 2);
  }
  return out;
}

Deno.test({
  name:
    "bodies of 1- and 2-byte chunks past 16 KiB reach the handler whole, and past the limit get a prompt 413",
  fn: async () => {
    const dir = await Deno.makeTempDir({ prefix: "wharf-tiny-chunks-" });
    const child = await spawnServer(dir, {
      WHARF_REGISTRY_ADMIN_PASSWORD: adminPassword,
      WHARF_INITIAL_ADMIN_PASSWORD: adminPassword,
      WHARF_ARGON2_TIME: "1",
      WHARF_ARGON2_MEMORY_KIB: "1024",
      WHARF_MAX_BODY_BYTES: String(jsonLimit),
      WHARF_BODY_TIMEOUT: "120s",
    });
    try {
      const methods = await (await fetch(`${child.url}/v1/auth-methods?scope_id=global`)).json();
      const primary = methods.items.find((m: { is_primary?: boolean }) => m.is_primary)?.id;
      assert(primary, "the global scope has a primary auth method");
      const boot = await fetch(`${child.url}/v1/acl/bootstrap`, { method: "POST" });
      assertEquals(boot.status, 200);
      const management: string = (await boot.json()).SecretID;
      const json = { "Content-Type": "application/json" };
      const form = { "Content-Type": "application/x-www-form-urlencoded" };
      const nomad = { ...json, "X-Nomad-Token": management };

      for (const chunkSize of [1, 2]) {
        const started = performance.now();
        // Below the limit (20,000 bytes, past the reader's first 16 KiB): each handler acts on the body's end.
        const registry = await postInChunks(
          child.url,
          "/api/v1/authenticate",
          json,
          padded(JSON.stringify({ user: { login: "admin", password: adminPassword } }), 20_000),
          chunkSize,
        );
        assertEquals(registry.status, 200, `registry login: ${registry.body}`);
        assert(JSON.parse(dechunk(registry.body)).token, "the registry login gives a token");

        const auth = await postInChunks(
          child.url,
          `/v1/auth-methods/${primary}:authenticate`,
          json,
          padded(JSON.stringify({ attributes: { login_name: "admin", password: adminPassword } }), 20_000),
          chunkSize,
        );
        assertEquals(auth.status, 200, `auth-method login: ${auth.body}`);
        assert(JSON.parse(dechunk(auth.body)).attributes.token, "the auth-method login gives a token");

        const name = `tiny-chunks-${chunkSize}`;
        const token = await postInChunks(
          child.url,
          "/v1/acl/token",
          nomad,
          padded(JSON.stringify({ Name: name, Type: "management" }), 20_000),
          chunkSize,
        );
        assertEquals(token.status, 200, `Nomad ACL token: ${token.body}`);
        assertEquals(JSON.parse(dechunk(token.body)).Name, name);

        // /oauth2/token at its limit exactly: read whole (the credentials at its end are checked: 401).
        const credentials = "&grant_type=client_credentials&client_id=nobody&client_secret=wrong";
        const atLimit = "pad=" + "x".repeat(oauthLimit - 4 - credentials.length) + credentials;
        assertEquals(atLimit.length, oauthLimit);
        const oauth = await postInChunks(child.url, "/oauth2/token", form, atLimit, chunkSize);
        assertEquals(oauth.status, 401, `/oauth2/token at its limit: ${oauth.body}`);
        assertStringIncludes(oauth.body, "invalid_client");

        // Past the limit: 413 in the family's own shape (the registry's JSON routes read up to 1 MiB whatever
        // WHARF_MAX_BODY_BYTES says: its 413 is the one of /oauth2/token, a registry route).
        const over = padded("{}", jsonLimit + 1000);
        const authOver = await postInChunks(
          child.url,
          `/v1/auth-methods/${primary}:authenticate`,
          json,
          over,
          chunkSize,
        );
        // Boundary answers a body past the limit with 400 InvalidArgument (routes/authmethods/errors.ts).
        assertEquals(authOver.status, 400, authOver.body);
        assertStringIncludes(authOver.body, "the request body is too large");
        const nomadOver = await postInChunks(child.url, "/v1/acl/token", nomad, over, chunkSize);
        assertEquals(nomadOver.status, 413, nomadOver.body);
        const oauthOver = await postInChunks(child.url, "/oauth2/token", form, atLimit + "x", chunkSize);
        assertEquals(oauthOver.status, 413, oauthOver.body);
        assertStringIncludes(oauthOver.body, "invalid_request");

        console.log(
          `${chunkSize}-byte chunks: 7 bodies answered in ${Math.round(performance.now() - started)} ms`,
        );
      }
    } finally {
      child.kill();
      await child.status;
      await Deno.remove(dir, { recursive: true });
    }
  },
});
