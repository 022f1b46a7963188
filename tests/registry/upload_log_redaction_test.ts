// No upload id reaches the access log, whatever the method, answer, spelling or encoding of the upload URL: the
// standard upload PUT needs no other credential, so a logged id is a write credential for whoever reads logs.

import { assert, assertEquals } from "../helpers/assert.ts";
import { spawnServer } from "../helpers/server.ts";
import { rawRequest } from "../registry_fuzz/raw_http.ts";
import { ADMIN_PASSWORD, Client } from "./helpers.ts";

const P = "/api/v1/box/admin/devbox/version/1.0.0/provider";

/** `id` with its first letter percent-encoded (Deno decodes it: the upload still works). */
function encodeFirstLetter(id: string): string {
  const i = id.search(/[A-Za-z]/);
  return id.slice(0, i) + "%" + id.charCodeAt(i).toString(16).toUpperCase() + id.slice(i + 1);
}

Deno.test("no upload id is logged for any method, status, case, encoding or slash variant of its URLs", async () => {
  const dir = await Deno.makeTempDir({ prefix: "wharf-upload-log-" });
  const ids: string[] = [];
  const child = await spawnServer(dir, { WHARF_REGISTRY_ADMIN_PASSWORD: ADMIN_PASSWORD }, [
    "--log-level",
    "info",
  ]);
  try {
    const api = new Client(child.url);
    const token = await api.login("admin", ADMIN_PASSWORD);
    assertEquals((await api.post("/api/v1/boxes", { name: "devbox" }, { token })).status, 200);
    assertEquals(
      (await api.post("/api/v1/box/admin/devbox/versions", { version: "1.0.0" }, { token })).status,
      200,
    );
    for (const name of ["standard", "direct"]) {
      const p = await api.post(`/api/v1/box/admin/devbox/version/1.0.0/providers`, { name }, { token });
      assertEquals(p.status, 200, p.text);
    }
    const std = (await api.get(`${P}/standard/upload`, { token })).body;
    const direct = (await api.get(`${P}/direct/upload/direct`, { token })).body;
    const stdId = new URL(std.upload_path).pathname.split("/").pop()!;
    const directId = new URL(direct.upload_path).pathname.split("/").pop()!;
    ids.push(stdId, directId);
    const callbackPath = new URL(direct.callback).pathname;
    const body = new TextEncoder().encode("box file bytes");
    const statuses: Record<string, number> = {};
    const send = async (label: string, method: string, target: string, withBody = false, auth = false) => {
      const headers: Record<string, string> = auth ? { Authorization: `Bearer ${token}` } : {};
      const r = await rawRequest(child.url, method, target, withBody ? { body, headers } : { headers });
      statuses[label] = r.status;
    };
    for (const method of ["GET", "POST", "HEAD", "DELETE", "PATCH", "OPTIONS"]) {
      await send(`${method} upload`, method, `/api/v1/uploads/${stdId}`);
      await send(`${method} callback`, method, callbackPath);
    }
    await send("trailing slash", "PUT", `/api/v1/uploads/${stdId}/`, true);
    await send("extra segment", "PUT", `/api/v1/uploads/${stdId}/more`, true);
    await send("double slashes", "GET", `//api/v1//uploads//${stdId}`);
    await send("upper case", "PUT", `/API/V1/UPLOADS/${stdId}`, true);
    await send("encoded literal", "PUT", `/api/v1/%75ploads/${stdId}`, true);
    await send("query", "GET", `/api/v1/uploads/${stdId}?x=1`);
    await send("callback trailing slash", "PUT", `${callbackPath}/`, false, true);
    // Spellings whose shape shows only once the whole path is decoded (issue #22, item 7).
    await send("encoded slash", "PUT", `/api/v1/uploads%2F${stdId}`, true);
    await send("encoded slash, lower case", "GET", `/api/v1/uploads%2f${stdId}`);
    await send("doubly encoded literal", "PUT", `/api/v1/%2575ploads/${stdId}`, true);
    await send("encoded dot segments", "PUT", `/api/v1/uploads%2f..%2fuploads/${stdId}`, true);
    // A whole secret is redacted wherever it appears, encoded or not: here the caller's own token.
    await send("token in a path", "GET", `/api/v1/box/admin/${token}`);
    await send("encoded token in a path", "GET", `/nowhere/x${encodeFirstLetter(token)}`);
    ids.push(token);
    // Last, the ones that work: a percent-encoded letter still uploads.
    await send("encoded id upload", "PUT", `/api/v1/uploads/${encodeFirstLetter(stdId)}`, true);
    await send("direct upload", "PUT", `/api/v1/uploads/${directId}`, true);
    await send(
      "encoded callback",
      "PUT",
      callbackPath.replace(directId, encodeFirstLetter(directId)),
      false,
      true,
    );
    // The same through API v2: its URLs name /api/v2 and, for the callback, the provider's architecture.
    const p2 = await api.post("/api/v2/box/admin/devbox/version/1.0.0/providers", {
      name: "v2",
      architecture: "arm64",
    }, { token });
    assertEquals(p2.status, 200, p2.text);
    const std2 = (await api.get("/api/v2/box/admin/devbox/version/1.0.0/provider/v2/arm64/upload", { token }))
      .body;
    const direct2 =
      (await api.get("/api/v2/box/admin/devbox/version/1.0.0/provider/v2/arm64/upload/direct", { token }))
        .body;
    const std2Path = new URL(std2.upload_path).pathname;
    const direct2Path = new URL(direct2.upload_path).pathname;
    assertEquals([std2Path.split("/")[2], direct2Path.split("/")[2]], ["v2", "v2"]);
    ids.push(std2Path.split("/").pop()!, direct2Path.split("/").pop()!);
    await send("v2 GET upload", "GET", std2Path);
    await send("v2 upper case", "PUT", std2Path.toUpperCase(), true);
    await send("v2 standard upload", "PUT", std2Path, true);
    await send("v2 direct upload", "PUT", direct2Path, true);
    await send("v2 callback", "PUT", new URL(direct2.callback).pathname, false, true);
    assertEquals(
      [statuses["v2 GET upload"], statuses["v2 standard upload"], statuses["v2 direct upload"]],
      [405, 200, 200],
    );
    assertEquals(statuses["v2 callback"], 200);
    assertEquals(statuses["GET upload"], 405);
    assertEquals(statuses["trailing slash"], 404);
    assertEquals(statuses["double slashes"], 405);
    assertEquals(statuses["encoded id upload"], 200);
    assertEquals(statuses["direct upload"], 200);
    assertEquals(statuses["encoded callback"], 200);
  } finally {
    child.kill();
    await child.status;
    await Deno.remove(dir, { recursive: true });
  }
  const output = child.stdout() + child.stderr();
  const accessLines = output.split("\n").filter((l) => l.includes('"msg":"request"'));
  assert(accessLines.length >= 34, `access lines were written (${accessLines.length})`);
  const redacted = accessLines.filter((l) => l.includes("***"));
  assert(redacted.length === 33, `the upload requests are logged, redacted (${redacted.length})`);
  // No 12-character piece of either id (an encoded letter splits one in two) appears in the output.
  for (const id of ids) {
    for (let i = 0; i + 12 <= id.length; i++) {
      const piece = id.slice(i, i + 12);
      assert(!output.includes(piece), `a piece of an upload id is logged: ${piece}`);
    }
  }
});
