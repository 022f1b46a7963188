// What the scale tests of SMS codes share: a local SMS webhook that every node of the test texts through, and
// sam, a user with two-factor by SMS.

import { assertEquals } from "../helpers/assert.ts";
import type { Client as RegistryClient } from "../registry/helpers.ts";
import type { ClusterContext } from "./helpers.ts";

export interface SmsSink {
  /** Every message the nodes sent, in order. */
  messages: { to: string; code: string }[];
  /** The nodes' setting pointing at the sink. */
  env: Record<string, string>;
}

/** Starts the sink; it stops at the end of the test. */
export function startSmsSink(cluster: ClusterContext): SmsSink {
  const messages: SmsSink["messages"] = [];
  const server = Deno.serve({ hostname: "127.0.0.1", port: 0, onListen: () => {} }, async (req) => {
    messages.push(await req.json());
    return new Response("ok");
  });
  cluster.defer(() => server.shutdown());
  return { messages, env: { WHARF_SMS_WEBHOOK: `http://127.0.0.1:${server.addr.port}/sms` } };
}

/** sam: two-factor on, by SMS to this number. */
export const smsUser = {
  username: "sam",
  email: "sam@example.com",
  password: "sam-password",
  mobile: "+15551230000",
  two_factor_enabled: true,
};

/** Creates sam through `api` as the registry admin. */
export async function createSmsUser(api: RegistryClient): Promise<void> {
  const admin = await api.login("admin", "admin-password-1");
  assertEquals((await api.post("/api/v1/admin/users", { user: smsUser }, { token: admin })).status, 200);
}
