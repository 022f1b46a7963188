// Password logins under 16 concurrent clients against the raw argon2id verify rate in the same process
// (Boundary's parameters: t=3, m=64 MiB, p=1), and a list request's latency while 16 logins are in flight.
// The login/verify ratio is printed as a `#` line (interleaved rounds); deno bench reports the list figures.
// Run: deno bench -A bench/authmethods_login_bench.ts

import { HashingQueue, PasswordHasher } from "../lib/password_hashing.ts";
import { startTestServer } from "../tests/helpers/server.ts";
import { Client, login } from "../tests/authmethods/helpers.ts";

const clients = 16;
const password = "bench-password-1";
// Real parameters: the comparison is only meaningful with the production cost.
const server = await startTestServer({ WHARF_INITIAL_ADMIN_PASSWORD: password });
const anon = new Client(server.url);
const methodId = (await anon.get("/v1/auth-methods?scope_id=global")).body.items[0].id;
const admin = new Client(server.url, await login(anon, methodId, "admin", password));
for (let i = 0; i < clients; i++) {
  const r = await admin.post("/v1/accounts", {
    auth_method_id: methodId,
    attributes: { login_name: `user${i}`, password },
  });
  if (r.status !== 200) throw new Error(JSON.stringify(r.body));
}
for (let i = 0; i < 50; i++) {
  await admin.post("/v1/auth-methods", { scope_id: "global", type: "password", name: `m${i}` });
}

const hasher = new PasswordHasher(
  { timeCost: 3, memoryKib: 65536, threads: 1 },
  new HashingQueue({ maxWaiting: 1024 }),
);
const phc = await hasher.hash(password);

const loginAll = () =>
  Promise.all(
    Array.from({ length: clients }, (_, i) =>
      anon.post(`/v1/auth-methods/${methodId}:authenticate`, {
        attributes: { login_name: `user${i}`, password },
      }).then((r) => {
        if (r.status !== 200) {
          throw new Error(`login ${r.status}`);
        }
      })),
  );

const rawVerifies = () => Promise.all(Array.from({ length: clients }, () => hasher.verify(phc, password)));

// Logins against raw verifies, interleaved round by round so that a change in machine load hits both.
const rounds = 6;
let rawMs = 0;
let loginMs = 0;
await rawVerifies();
await loginAll();
for (let i = 0; i < rounds; i++) {
  let t = performance.now();
  await rawVerifies();
  rawMs += performance.now() - t;
  t = performance.now();
  await loginAll();
  loginMs += performance.now() - t;
}
const verifiesPerSecond = (rounds * clients * 1000) / rawMs;
const loginsPerSecond = (rounds * clients * 1000) / loginMs;
console.log(
  `# ${clients} clients, ${rounds} interleaved rounds: raw argon2id ${
    verifiesPerSecond.toFixed(2)
  } verifies/s, ` +
    `HTTP password logins ${loginsPerSecond.toFixed(2)} logins/s, ratio ${
      (loginsPerSecond / verifiesPerSecond).toFixed(2)
    }`,
);

Deno.bench(
  "list page (50 methods) idle",
  { group: "list-under-load", baseline: true, n: 50, warmup: 3 },
  async () => {
    await admin.get("/v1/auth-methods?scope_id=global");
  },
);

Deno.bench("list page (50 methods) while 16 logins are in flight", {
  group: "list-under-load",
  n: 50,
  warmup: 3,
}, async (b) => {
  const load = loginAll();
  await new Promise((r) => setTimeout(r, 5));
  b.start();
  await admin.get("/v1/auth-methods?scope_id=global");
  b.end();
  await load;
});

globalThis.addEventListener("unload", () => {
  server.stop();
});
