// The floor for an LDAP login over HTTP (bench/authmethods_ldap.ts): a bare Deno.serve that binds as the
// user on a reused ldapts connection and answers 200, plus, by mode, the work the spec adds to a login:
//   bind   — the user's bind only (no entry read, no token, no fsync, no throttle);
//   read   — bind + the entry read wharf (and Boundary) does: every user attribute of the entry, from which
//            account_attribute_maps picks email and full_name;
//   log    — read + a token minted and appended to the real EventLog (fdatasync'd, group commit) before the 200;
//   store  — read + the token committed through the real DocumentStore (log append + the 1 s checkpoint,
//            which packs auth/tokens into one file per checkpoint), as wharf commits it.
// Nothing that logs in over HTTP can do less than its mode; its rate bounds what the API can reach here.
// Run by the bench as a child process:
//   deno run -A bench/authmethods_ldap_floor.ts <ldap url> <user base DN> [bind|read|log|store] [data dir]

import { Client } from "ldapts";
import { createHash } from "node:crypto";
import { DataDir, EventLog } from "../lib/store/mod.ts";

const [ldapUrl, userBase, mode = "bind", dataPath] = Deno.args;
if (!ldapUrl || !userBase || !["bind", "read", "log", "store"].includes(mode)) {
  throw new Error(
    "usage: authmethods_ldap_floor.ts <ldap url> <user base DN> [bind|read|log|store] [data dir]",
  );
}
const durable = mode === "log" || mode === "store";
if (durable && !dataPath) throw new Error(`mode ${mode} needs a data dir`);
const log = mode === "log" ? await EventLog.open(`${dataPath}/events`) : undefined;
const data = mode === "store"
  ? await DataDir.open(dataPath!, { packedCollections: ["auth/tokens"] })
  : undefined;
const idle: Client[] = [];

/** A token as wharf mints one: an id, 32 random bytes of secret, its SHA-256 stored. */
function mint(user: string, entryDn: string) {
  const secret = crypto.getRandomValues(new Uint8Array(32));
  const id = `at_${crypto.randomUUID().slice(0, 10)}`;
  const now = new Date().toISOString();
  const doc = {
    hash: createHash("sha256").update(secret).digest("hex"),
    user_id: `u_${user}`,
    account_id: entryDn,
    created_time: now,
    expiration_time: now,
  };
  const event = {
    Topic: "AuthToken",
    Type: "AuthTokenIssued",
    Key: id,
    Namespace: "",
    FilterKeys: [],
    Payload: { AuthToken: { id, user_id: doc.user_id } },
  };
  return { id, doc, event };
}

async function commit(user: string, entryDn: string): Promise<void> {
  const t = mint(user, entryDn);
  if (mode === "log") {
    await log!.append((index) => ({
      Events: [{ ...t.event, Index: index }],
      Docs: [{ c: "auth/tokens", id: t.id, v: 1, d: t.doc }],
    }));
  } else {
    await data!.store.transact([], () => ({
      writes: [{ collection: "auth/tokens", id: t.id, doc: t.doc, ifVersion: 0 }],
      events: [{ Topic: "AuthToken", Type: "AuthTokenIssued", Key: t.id, Payload: t.event.Payload }],
    }));
  }
}

const server = Deno.serve({ hostname: "127.0.0.1", port: 0, onListen: () => {} }, async (req) => {
  const body = await req.json() as { attributes?: { login_name?: string; password?: string } };
  const client = idle.pop() ?? new Client({ url: ldapUrl, timeout: 5000 });
  const dn = `uid=${body.attributes?.login_name},${userBase}`;
  try {
    await client.bind(dn, body.attributes?.password ?? "");
    if (mode !== "bind") {
      const { searchEntries } = await client.search(dn, { scope: "base" });
      if (searchEntries.length !== 1) throw new Error("entry not readable");
    }
    idle.push(client);
  } catch {
    await client.unbind().catch(() => {});
    return Response.json({ ok: false }, { status: 401 });
  }
  if (durable) await commit(String(body.attributes?.login_name), dn);
  return Response.json({ ok: true });
});
console.log(`floor listening on http://127.0.0.1:${server.addr.port}`);
