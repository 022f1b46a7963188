// The limits on SMS code requests hold across two nodes of one database (docs/security.md#throttles): a
// code asked through one node right after one was sent through the other is refused, two asked at once through
// both send one text, and the hourly cap counts the sends of both nodes, in the API's and the console's 429.

import { assert, assertEquals } from "../helpers/assert.ts";
import { Client as RegistryClient } from "../registry/helpers.ts";
import { WebClient } from "../console/helpers.ts";
import { clusterTest } from "./helpers.ts";
import { createSmsUser, smsUser, startSmsSink } from "./sms_sink.ts";

/** The shortest time between two codes here (WHARF_2FA_SMS_INTERVAL), so that five sends take seconds. */
const intervalMs = 2000;
const pastInterval = () => new Promise((r) => setTimeout(r, intervalMs + 200));

clusterTest("SMS code requests are limited per user across the nodes", {}, async (cluster) => {
  const sink = startSmsSink(cluster);
  const texts = sink.messages;
  for (const name of ["a", "b"]) {
    await cluster.spawn(name, { ...sink.env, WHARF_2FA_SMS_INTERVAL: `${intervalMs}ms` });
  }
  const [a, b] = cluster.started.map((n) => new RegistryClient(n.url)) as [RegistryClient, RegistryClient];
  await createSmsUser(a);
  /** sam's code request through `node`: its status and Retry-After. */
  const requestCode = async (node: RegistryClient) => {
    const r = await node.post("/api/v1/two-factor/request-code", {
      user: { login: "sam", password: "sam-password" },
      two_factor: { delivery_method: "sms" },
    });
    return { status: r.status, retryAfter: Number(r.headers.get("Retry-After") ?? 0), errors: r.body.errors };
  };

  // Through node a, then at once through node b: b refuses, one text.
  assertEquals((await requestCode(a)).status, 200);
  const fromB = await requestCode(b);
  assertEquals([fromB.status, texts.length], [429, 1], JSON.stringify(fromB));
  assert(fromB.retryAfter >= 1 && fromB.retryAfter <= intervalMs / 1000, `Retry-After ${fromB.retryAfter}`);
  assertEquals(fromB.errors, [`Rate limit exceeded; retry in ${fromB.retryAfter} s`]);

  // Through both at the same moment: one is sent, the other refused.
  await pastInterval();
  const both = await Promise.all([requestCode(a), requestCode(b)]);
  assertEquals([both.map((r) => r.status).sort(), texts.length], [[200, 429], 2]);

  // Sends three to five, alternating; the sixth within the hour is refused on both nodes until an hour after
  // the first, in each family's shape.
  for (const node of [a, b, a]) {
    await pastInterval();
    assertEquals((await requestCode(node)).status, 200);
  }
  await pastInterval();
  for (const node of [a, b]) {
    const capped = await requestCode(node);
    assertEquals(capped.status, 429);
    assert(capped.retryAfter > 3000 && capped.retryAfter <= 3600, `Retry-After ${capped.retryAfter}`);
  }
  const web = new WebClient(cluster.started[1]!.url);
  await web.get("/ui/login");
  const page = await web.postForm("/ui/login", { login: "sam", password: "sam-password", send_sms: "1" });
  assertEquals(page.status, 429, page.text.slice(0, 300));
  assert(Number(page.headers.get("Retry-After")) > 3000, "the console's Retry-After");
  assertEquals(texts.map((t) => t.to), Array(5).fill(smsUser.mobile));
});
