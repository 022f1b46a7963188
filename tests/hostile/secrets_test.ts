// Secrets never leak: with OIDC/LDAP secrets and a Nomad OIDC auth method's client secret set, password logins,
// password changes, failed logins, ACL tokens made and a one-time token issued and exchanged, no secret appears
// in any list/read answer (policy self and metrics too), the event stream (index=0, management), the child
// server's debug stderr/stdout, or (in plain text) any file of the data dir. Allowed exceptions, per the specs:
// the token in a login answer, and the SecretID in ACL bootstrap/create/read answers (not checked below).

import { assert } from "../helpers/assert.ts";
import { spawnServer, withTimeout } from "../helpers/server.ts";
import { generateTestPki, opensslAvailable } from "../fixtures/tls_certs.ts";
import { adminPassword, Client, fastEnv, login } from "../authmethods/helpers.ts";
import { listTree } from "../helpers/files.ts";

const unique = () => crypto.randomUUID().replaceAll("-", "").slice(0, 16);

async function ok(c: Client, method: string, path: string, body?: unknown) {
  const r = await c.call(method, path, body);
  if (r.status !== 200) throw new Error(`${method} ${path} → ${r.status} ${JSON.stringify(r.body)}`);
  return r.body;
}

/** Reads the stream until a frame at or past `lastIndex` arrives (bounded), then cancels it. */
async function readStream(url: string, token: string, lastIndex: number): Promise<string> {
  const abort = new AbortController();
  const res = await fetch(`${url}/v1/event/stream?index=0`, {
    headers: { "X-Nomad-Token": token },
    signal: abort.signal,
  });
  assert(res.status === 200, `stream → ${res.status}`);
  const reader = res.body!.pipeThrough(new TextDecoderStream()).getReader();
  let text = "";
  try {
    await withTimeout(
      (async () => {
        while (true) {
          const { value, done } = await reader.read();
          if (done) return;
          text += value;
          const indexes = [...text.matchAll(/^\{"Index":(\d+)/gm)].map((m) => Number(m[1]));
          if (indexes.some((i) => i >= lastIndex)) return;
        }
      })(),
      15_000,
      `stream never reached index ${lastIndex}`,
    );
  } finally {
    await reader.cancel().catch(() => {});
    abort.abort();
  }
  return text;
}

Deno.test({
  name: "secrets never appear in answers, the event stream, debug logs or data files",
  ignore: !opensslAvailable(),
  async fn() {
    const dataDir = await Deno.makeTempDir({ prefix: "wharf-secrets-" });
    const pkiDir = await Deno.makeTempDir({ prefix: "wharf-secrets-pki-" });
    const child = await spawnServer(dataDir, fastEnv, ["--log-level", "debug"]);
    try {
      const pki = await generateTestPki(pkiDir);
      const keyLines = pki.clientKeyPem.split("\n").filter((l) => l && !l.startsWith("-----"));
      const fixed = {
        adminPassword,
        oidcSecret: `oidc-client-secret-${unique()}`,
        oidcSecret2: `oidc-client-secret-two-${unique()}`,
        bindPassword: `ldap-bind-password-${unique()}`,
        // The longest line of the key's base64 identifies it without matching anything by chance.
        clientKeyLine: keyLines.reduce((a, b) => (b.length > a.length ? b : a)),
        userPassword: `user-password-${unique()}`,
        userPassword2: `user-password-two-${unique()}`,
        userPassword3: `user-password-three-${unique()}`,
        wrongPassword: `wrong-password-${unique()}`,
        ldapUserPassword: `ldap-user-password-${unique()}`,
      };
      const secrets: Record<string, string> = { ...fixed };
      const anon = new Client(child.url);
      const methods = await ok(anon, "GET", "/v1/auth-methods?scope_id=global");
      const pw: string = methods.items.find((m: { is_primary?: boolean }) => m.is_primary).id;
      const adminToken = await login(anon, pw, "admin", adminPassword);
      const admin = new Client(child.url, adminToken);
      const oidc = await ok(admin, "POST", "/v1/auth-methods", {
        scope_id: "global",
        type: "oidc",
        attributes: {
          client_id: "cid",
          client_secret: fixed.oidcSecret,
          api_url_prefix: "https://wharf.example",
        },
      });
      await ok(admin, "PATCH", `/v1/auth-methods/${oidc.id}`, {
        version: oidc.version,
        attributes: { client_secret: fixed.oidcSecret2 },
      });
      const ldap = await ok(admin, "POST", "/v1/auth-methods", {
        scope_id: "global",
        type: "ldap",
        attributes: {
          urls: ["ldap://127.0.0.1:1"],
          state: "active-public",
          bind_dn: "cn=reader,dc=example",
          bind_password: fixed.bindPassword,
          client_certificate: pki.clientCertPem,
          client_certificate_key: pki.clientKeyPem,
        },
      });
      // A login against an unreachable directory goes through the LDAP error logging with the bind password set.
      await admin.post(`/v1/auth-methods/${ldap.id}:authenticate`, {
        attributes: { login_name: "ldapuser", password: fixed.ldapUserPassword },
      });
      const account = await ok(admin, "POST", "/v1/accounts", {
        auth_method_id: pw,
        attributes: { login_name: "bob", password: fixed.userPassword },
      });
      const userToken = await login(anon, pw, "bob", fixed.userPassword);
      const user = new Client(child.url, userToken);
      await ok(user, "POST", `/v1/accounts/${account.id}:change-password`, {
        version: account.version,
        current_password: fixed.userPassword,
        new_password: fixed.userPassword2,
      });
      const afterChange = await ok(admin, "GET", `/v1/accounts/${account.id}`);
      await ok(admin, "POST", `/v1/accounts/${account.id}:set-password`, {
        version: afterChange.version,
        password: fixed.userPassword3,
      });
      const failed = await anon.post(`/v1/auth-methods/${pw}:authenticate`, {
        attributes: { login_name: "bob", password: fixed.wrongPassword },
      });
      assert(failed.status === 401, `wrong password → ${failed.status}`);
      const bobToken = await login(anon, pw, "bob", fixed.userPassword3);
      secrets.adminToken = adminToken;
      secrets.bobToken = bobToken;
      secrets.bobTokenSecretPart = bobToken.slice(bobToken.indexOf("_s1") + 3);

      const boot = await fetch(`${child.url}/v1/acl/bootstrap`, { method: "POST" });
      const management: string = (await boot.json()).SecretID;
      const nomad = async (method: string, path: string, body?: unknown, token = management) => {
        const r = await fetch(child.url + path, {
          method,
          headers: token ? { "X-Nomad-Token": token } : {},
          body: body === undefined ? undefined : JSON.stringify(body),
        });
        return { status: r.status, text: await r.text() };
      };
      await nomad("PUT", "/v1/acl/policy/readnodes", {
        Name: "readnodes",
        Rules: 'node { policy = "read" }',
      });
      const clientToken = JSON.parse(
        (await nomad("PUT", "/v1/acl/token", { Name: "c", Type: "client", Policies: ["readnodes"] })).text,
      );
      const manager = JSON.parse(
        (await nomad("PUT", "/v1/acl/token", { Name: "m", Type: "management" })).text,
      );
      secrets.managementSecret = management;
      secrets.clientSecret = clientToken.SecretID;
      secrets.managerSecret = manager.SecretID;
      const answers: Record<string, string> = {};
      // A one-time token for the client token (its secret shown once, in the issue answer), a wrong exchange
      // (the tried secret with a control character), and the real exchange (its answer is the client token's).
      const issued = await nomad("PUT", "/v1/acl/token/onetime", undefined, clientToken.SecretID);
      assert(issued.status === 200, `one-time issue → ${issued.status} ${issued.text}`);
      secrets.oneTimeSecret = JSON.parse(issued.text).OneTimeToken.OneTimeSecretID;
      secrets.wrongOneTimeSecret = `wrong-one-time-${unique()}`;
      const wrong = await nomad("PUT", "/v1/acl/token/onetime/exchange", {
        OneTimeSecretID: `${secrets.wrongOneTimeSecret}\u0000`,
      }, "");
      assert(wrong.status === 403, `wrong exchange → ${wrong.status} ${wrong.text}`);
      answers["wrong one-time exchange"] = wrong.text;
      const exchanged = await nomad("PUT", "/v1/acl/token/onetime/exchange", {
        OneTimeSecretID: secrets.oneTimeSecret,
      }, "");
      assert(exchanged.status === 200, `one-time exchange → ${exchanged.status} ${exchanged.text}`);
      secrets.nomadOidcSecret = `nomad-oidc-client-secret-${unique()}`;
      const method = await nomad("PUT", "/v1/acl/auth-method", {
        Name: "corp",
        Type: "OIDC",
        TokenLocality: "local",
        MaxTokenTTL: "1h",
        Config: {
          OIDCDiscoveryURL: "https://idp.example",
          OIDCClientID: "wharf",
          OIDCClientSecret: secrets.nomadOidcSecret,
        },
      });
      assert(method.status === 200, `auth method → ${method.status} ${method.text}`);
      answers["auth method create"] = method.text;
      secrets.nodeSecret = crypto.randomUUID();
      await nomad("PUT", "/v1/node/register", {
        Node: { ID: crypto.randomUUID(), SecretID: secrets.nodeSecret },
      });

      const authReads = [
        "/v1/auth-methods?scope_id=global&recursive=true",
        `/v1/auth-methods/${pw}`,
        `/v1/auth-methods/${oidc.id}`,
        `/v1/auth-methods/${ldap.id}`,
        "/v1/scopes?scope_id=global",
        "/v1/scopes/global",
        `/v1/accounts?auth_method_id=${pw}`,
        `/v1/accounts?auth_method_id=${ldap.id}`,
        `/v1/accounts/${account.id}`,
        "/v1/users?scope_id=global&recursive=true",
        `/v1/auth-tokens/${bobToken.slice(0, 13)}`,
        `/v1/auth-tokens/${adminToken.slice(0, 13)}`,
      ];
      for (const path of authReads) {
        for (
          const [who, c] of [["admin", admin], ["bob", new Client(child.url, bobToken)], [
            "anon",
            anon,
          ]] as const
        ) {
          answers[`${who} ${path}`] = JSON.stringify((await c.get(path)).body);
        }
      }
      for (
        const path of [
          "/v1/acl/policies",
          "/v1/acl/policy/readnodes",
          "/v1/acl/tokens",
          "/v1/acl/auth-methods",
          "/v1/acl/auth-method/corp",
          "/v1/nodes",
          "/v1/jobs",
        ]
      ) {
        answers[`management ${path}`] = (await nomad("GET", path)).text;
        answers[`client ${path}`] = (await nomad("GET", path, undefined, clientToken.SecretID)).text;
      }
      answers["anonymous self"] = (await nomad("GET", "/v1/acl/token/self", undefined, "")).text;
      answers["anonymous policy self"] = (await nomad("GET", "/v1/acl/policy/self", undefined, "")).text;
      answers["management policy self"] = (await nomad("GET", "/v1/acl/policy/self")).text;
      answers["client policy self"] =
        (await nomad("GET", "/v1/acl/policy/self", undefined, clientToken.SecretID)).text;
      answers["metrics"] = (await nomad("GET", "/v1/metrics")).text;
      answers["metrics prometheus"] = (await nomad("GET", "/v1/metrics?format=prometheus")).text;
      answers["client metrics"] = (await nomad("GET", "/v1/metrics", undefined, clientToken.SecretID)).text;
      answers["health"] = await (await fetch(`${child.url}/health`)).text();
      const lastIndex = JSON.parse(answers["health"]).index as number;
      answers["stream"] = await readStream(child.url, management, lastIndex);
      assert(
        answers["stream"].includes('"ACLTokenUpserted"'),
        "the stream should carry the ACL token events",
      );

      child.kill("SIGTERM");
      await withTimeout(child.status, 20_000, "server did not exit after SIGTERM");
      answers["stderr"] = child.stderr();
      answers["stdout"] = child.stdout();
      assert(
        answers["stderr"].includes('"level":"debug"') || answers["stderr"].includes("request_id"),
        "no log",
      );
      for (const path of await listTree(dataDir)) {
        const info = await Deno.stat(`${dataDir}/${path}`);
        if (!info.isFile) continue;
        answers[`data file ${path}`] = new TextDecoder("latin1").decode(
          await Deno.readFile(`${dataDir}/${path}`),
        );
      }

      const leaks: string[] = [];
      for (const [where, text] of Object.entries(answers)) {
        for (const [name, secret] of Object.entries(secrets)) {
          if (text.includes(secret)) leaks.push(`${name} in ${where}`);
        }
      }
      assert(leaks.length === 0, `secrets leaked:\n${leaks.join("\n")}`);
    } finally {
      child.kill("SIGKILL");
      await child.status.catch(() => {});
      await Deno.remove(dataDir, { recursive: true }).catch(() => {});
      await Deno.remove(pkiDir, { recursive: true }).catch(() => {});
    }
  },
});
