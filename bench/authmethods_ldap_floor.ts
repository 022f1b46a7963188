// The floor for an LDAP login over HTTP (bench/authmethods_ldap.ts): a bare Deno.serve that binds as the
// user on a reused ldapts connection and answers 200 — no entry read, no token, no fsync, no throttle.
// Nothing that logs in over HTTP can do less; its rate bounds what the API can reach on this machine.
// Run by the bench as a child process: deno run -A bench/authmethods_ldap_floor.ts <ldap url> <user base DN>

import { Client } from "ldapts";

const [ldapUrl, userBase] = Deno.args;
if (!ldapUrl || !userBase) throw new Error("usage: authmethods_ldap_floor.ts <ldap url> <user base DN>");
const idle: Client[] = [];

const server = Deno.serve({ hostname: "127.0.0.1", port: 0, onListen: () => {} }, async (req) => {
  const body = await req.json() as { attributes?: { login_name?: string; password?: string } };
  const client = idle.pop() ?? new Client({ url: ldapUrl, timeout: 5000 });
  try {
    await client.bind(`uid=${body.attributes?.login_name},${userBase}`, body.attributes?.password ?? "");
    idle.push(client);
    return Response.json({ ok: true });
  } catch {
    await client.unbind().catch(() => {});
    return Response.json({ ok: false }, { status: 401 });
  }
});
console.log(`floor listening on http://127.0.0.1:${server.addr.port}`);
