// The rate-limit step (lib/router/steps/rate_limit.ts) through a router on a cluster view: a GET that missed and
// is answered again after its view caught up takes one token, not two; past the burst it is a 429 with Retry-After.

import { assertEquals } from "../helpers/assert.ts";
import { type ClusterView, Router } from "../../lib/router.ts";
import { rateLimitStep } from "../../lib/router/steps/rate_limit.ts";
import { RateLimiter } from "../../lib/rate_limiter.ts";
import { createLogger } from "../../lib/log.ts";
import { json } from "../../lib/http.ts";
import { registryFamily } from "../../routes/registry/core/family.ts";

Deno.test("a GET answered again after catching up is counted once; the next one past the burst gets 429", async () => {
  // A view one commit behind: the first sync moves it, as when another node just created the box.
  let index = 1;
  const cluster: ClusterView = { sync: () => Promise.resolve(void (index = 2)), index: () => index };
  const limiter = new RateLimiter(0.001, 1);
  const answers: string[] = [];
  const router = Router.forGroups([{
    family: registryFamily,
    steps: [rateLimitStep(limiter, (ctx) => `ip:${ctx.clientIp}`)],
    routes: [{
      method: "GET",
      path: "/api/v1/box/:name",
      handler: (ctx) => {
        answers.push(ctx.retry ? "again" : "first");
        return index === 2 ? json({ name: ctx.params.name }) : json({ errors: ["not found"] }, 404);
      },
    }],
  }], { logger: createLogger("error"), maxBodyBytes: 64, trustProxy: false, cluster });
  const get = async () => {
    const res = await router.handle(new Request("http://127.0.0.1/api/v1/box/b"), "127.0.0.1");
    return [res.status, res.headers.get("Retry-After"), await res.json()];
  };
  assertEquals(await get(), [200, null, { name: "b" }]);
  assertEquals(answers, ["first", "again"]);
  const [status, retryAfter, body] = await get();
  assertEquals([status, Number(retryAfter) > 0], [429, true]);
  assertEquals((body as { errors: string[] }).errors[0]!.startsWith("Rate limit exceeded; retry in "), true);
  assertEquals(answers, ["first", "again"]);
});
