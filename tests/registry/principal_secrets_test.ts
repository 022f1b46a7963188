// No client secret of a service principal (nor a token it got, nor a wrong secret tried) appears in any
// answer after the create, in the server's debug log, or in plain text in any file of the data dir (events
// included).

import { assert, assertEquals } from "../helpers/assert.ts";
import { spawnServer, withTimeout } from "../helpers/server.ts";
import { listTree } from "../helpers/files.ts";
import { ADMIN_PASSWORD, Client } from "./helpers.ts";
import { basicHeader, type CreatedPrincipal, spPath } from "./principal_helpers.ts";

Deno.test("service principal secrets never reach logs, events, later answers or the data dir", async () => {
  const dataDir = await Deno.makeTempDir({ prefix: "wharf-sp-secrets-" });
  const child = await spawnServer(dataDir, { WHARF_REGISTRY_ADMIN_PASSWORD: ADMIN_PASSWORD }, [
    "--log-level",
    "debug",
  ]);
  try {
    const api = new Client(child.url);
    const admin = await api.login("admin", ADMIN_PASSWORD);
    const ok = async (method: string, path: string, body?: unknown, token = admin) => {
      const a = await api.call(method, path, { token, ...(body === undefined ? {} : { body }) });
      assert(a.status >= 200 && a.status < 300, `${method} ${path} → ${a.status} ${a.text}`);
      return a;
    };
    await ok("POST", "/api/v1/admin/organizations", { organization: { name: "acme" } });
    const ci = (await ok("POST", spPath("acme"), { service_principal: { name: "ci" } }))
      .body as CreatedPrincipal;
    const gone = (await ok("POST", spPath("acme"), { name: "gone" })).body as CreatedPrincipal;
    const form = (p: CreatedPrincipal, secret = p.client_secret) =>
      api.call("POST", "/oauth2/token", {
        headers: { "Content-Type": "application/x-www-form-urlencoded" },
        raw: new URLSearchParams({
          grant_type: "client_credentials",
          client_id: p.client_id,
          client_secret: secret,
        })
          .toString(),
      });
    const wrongSecret = `wharf_sp_wrong_${crypto.randomUUID()}`;
    assertEquals((await form(ci, wrongSecret)).status, 401);
    const viaForm = await form(ci);
    assertEquals(viaForm.status, 200, viaForm.text);
    const viaBasic = await api.call("POST", "/oauth2/token", {
      headers: {
        "Content-Type": "application/x-www-form-urlencoded",
        Authorization: basicHeader(gone.client_id, gone.client_secret),
      },
      raw: "grant_type=client_credentials",
    });
    assertEquals(viaBasic.status, 200, viaBasic.text);
    const token = viaForm.body.access_token as string;
    // The token writes: box events are committed with the principal as actor.
    await ok(
      "POST",
      "/api/v1/boxes",
      { box: { username: "acme", name: "devbox", is_private: false } },
      token,
    );
    await ok("POST", "/api/v1/box/acme/devbox/versions", { version: { version: "1.0.0" } }, token);
    await ok("GET", "/api/v1/authenticate", undefined, token);
    await ok("DELETE", `${spPath("acme")}/${gone.client_id}`);

    const answers: Record<string, string> = {};
    for (
      const path of [
        spPath("acme"),
        "/api/v2/admin/organizations/acme/service-principals",
        "/api/v1/user/acme",
      ]
    ) {
      answers[path] = (await ok("GET", path)).text;
    }
    answers["box"] = (await ok("GET", "/api/v1/box/acme/devbox", undefined, token)).text;
    const secrets: Record<string, string> = {
      ciSecret: ci.client_secret,
      goneSecret: gone.client_secret,
      wrongSecret,
      formToken: token,
      basicToken: viaBasic.body.access_token,
      // The part after the prefix, in case something strips it.
      ciSecretTail: ci.client_secret.slice("wharf_sp_".length),
    };

    child.kill("SIGTERM");
    await withTimeout(child.status, 20_000, "server did not exit after SIGTERM");
    answers.stderr = child.stderr();
    answers.stdout = child.stdout();
    assert(answers.stderr.includes("/oauth2/token"), "the debug log should show the token requests");
    let sawPrincipal = false;
    for (const path of await listTree(dataDir)) {
      const info = await Deno.stat(`${dataDir}/${path}`);
      if (!info.isFile) continue;
      const text = new TextDecoder("latin1").decode(await Deno.readFile(`${dataDir}/${path}`));
      if (text.includes(ci.client_id)) sawPrincipal = true;
      answers[`data file ${path}`] = text;
    }
    assert(sawPrincipal, "the principal should be stored in the data dir");
    const leaks: string[] = [];
    for (const [where, text] of Object.entries(answers)) {
      for (const [name, secret] of Object.entries(secrets)) {
        if (text.includes(secret)) leaks.push(`${name} in ${where}`);
      }
    }
    assertEquals(leaks, []);
  } finally {
    child.kill("SIGKILL");
    await child.status.catch(() => {});
    await Deno.remove(dataDir, { recursive: true }).catch(() => {});
  }
});
