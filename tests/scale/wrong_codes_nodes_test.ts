// The limit of wrong two-factor codes holds across two nodes of one database (docs/security.md#throttles): ten
// wrong codes through one node leave the other answering 429, to a wrong code and to the right one alike (API
// and console), and wrong codes sent at once through both get no more than ten real answers between them.

import * as OTPAuth from "otpauth";
import { assert, assertEquals } from "../helpers/assert.ts";
import { Client as RegistryClient } from "../registry/helpers.ts";
import { WebClient } from "../console/helpers.ts";
import { tally } from "../helpers/statuses.ts";
import { clusterTest } from "./helpers.ts";

/** Creates `name` (password `NAME-password`) through `api` as the registry admin, with `fields`. */
async function createUser(api: RegistryClient, admin: string, name: string, fields: Record<string, unknown>) {
  const user = { username: name, email: `${name}@example.com`, password: `${name}-password`, ...fields };
  const created = await api.post("/api/v1/admin/users", { user }, { token: admin });
  assertEquals(created.status, 200, created.text);
}

/** Gives `name` an authenticator app (confirmed with the previous step's code) and turns two-factor on. */
async function enrolApp(api: RegistryClient, admin: string, name: string): Promise<OTPAuth.TOTP> {
  const enrol = await api.post(`/api/v1/admin/users/${name}/totp`, undefined, { token: admin });
  assertEquals(enrol.status, 200, enrol.text);
  const app = new OTPAuth.TOTP({
    secret: OTPAuth.Secret.fromBase32(enrol.body.secret),
    digits: 6,
    period: 30,
  });
  const previous = app.generate({ timestamp: Date.now() - 30_000 });
  const confirm = await api.post(`/api/v1/admin/users/${name}/totp/confirm`, { code: previous }, {
    token: admin,
  });
  assertEquals(confirm.status, 200, confirm.text);
  const on = await api.put(`/api/v1/admin/users/${name}`, { two_factor_enabled: true }, { token: admin });
  assertEquals(on.status, 200, on.text);
  return app;
}

/** A six-digit code that is none of the app's around now. */
function wrongCode(app: OTPAuth.TOTP): string {
  const now = Date.now();
  const valid = [-1, 0, 1].map((d) => app.generate({ timestamp: now + d * 30_000 }));
  for (let n = 0;; n++) {
    const code = String(n).padStart(6, "0");
    if (!valid.includes(code)) return code;
  }
}

clusterTest("the limit of wrong two-factor codes holds across the nodes", {}, async (cluster) => {
  for (const name of ["a", "b"]) await cluster.spawn(name);
  const [a, b] = cluster.started.map((n) => new RegistryClient(n.url)) as [RegistryClient, RegistryClient];
  const admin = await a.login("admin", "admin-password-1");
  const login = (node: RegistryClient, name: string, code: string) =>
    node.post("/api/v1/authenticate", {
      user: { login: name, password: `${name}-password` },
      two_factor: { code },
    });

  // tia: ten wrong codes through node a, then node b refuses a wrong code and the right one.
  await createUser(a, admin, "tia", {});
  const app = await enrolApp(a, admin, "tia");
  for (let i = 0; i < 10; i++) {
    const wrong = await login(a, "tia", wrongCode(app));
    assertEquals(wrong.status, 406, wrong.text);
  }
  const wrongThroughB = await login(b, "tia", wrongCode(app));
  assertEquals(wrongThroughB.status, 429, wrongThroughB.text);
  const retryAfter = Number(wrongThroughB.headers.get("Retry-After"));
  assert(retryAfter > 800 && retryAfter <= 900, `Retry-After ${retryAfter}`);
  assertEquals(wrongThroughB.body, {
    errors: [`Rate limit exceeded; retry in ${retryAfter} s`],
    success: false,
  });
  const rightThroughB = await login(b, "tia", app.generate());
  assertEquals(rightThroughB.status, 429, rightThroughB.text);
  // The console's password form on node b counts the same ten.
  const web = new WebClient(cluster.started[1]!.url);
  const page = await web.signIn("tia", "tia-password", app.generate());
  assertEquals(page.status, 429, page.text.slice(0, 300));

  // uma (two-factor by SMS, no code sent): fifteen wrong codes at once, alternating between the nodes.
  await createUser(a, admin, "uma", { mobile: "+15551230001" });
  const on = await a.put("/api/v1/admin/users/uma", { two_factor_enabled: true }, { token: admin });
  assertEquals(on.status, 200, on.text);
  const answers = await Promise.all(
    Array.from({ length: 15 }, (_, i) => login(i % 2 ? b : a, "uma", "123456")),
  );
  assertEquals(tally(answers), { 406: 10, 429: 5 });
  for (const node of [a, b]) assertEquals((await login(node, "uma", "123456")).status, 429);
});
