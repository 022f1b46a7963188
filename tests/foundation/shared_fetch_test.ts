// lib/oidc/shared_fetch.ts's single flight (docs/security.md#openid-providers): callers at the same time share one
// run of the work, and a run that failed — even by throwing before it returned a promise — leaves no entry behind,
// so the next caller runs the work again.

import { assertEquals, assertRejects } from "../helpers/assert.ts";
import { SingleFlight } from "../../lib/oidc/shared_fetch.ts";

Deno.test("single flight: concurrent callers share one run; the next caller after it settles runs again", async () => {
  const flights = new SingleFlight<number>();
  let runs = 0;
  const work = async () => {
    runs++;
    await new Promise((r) => setTimeout(r, 20));
    return runs;
  };
  const answers = await Promise.all([1, 2, 3].map(() => flights.run("issuer", work)));
  assertEquals([answers, runs], [[1, 1, 1], 1]);
  assertEquals(await flights.run("issuer", work), 2);
  assertEquals(await flights.run("other", work), 3);
});

Deno.test("single flight: a work that throws at once rejects its callers and does not stick to the key", async () => {
  const flights = new SingleFlight<string>();
  const broken = (): Promise<string> => {
    throw new Error("no provider configured");
  };
  await assertRejects(
    () => flights.run("issuer", broken),
    (err) => err instanceof Error && err.message === "no provider configured",
  );
  let ran = false;
  const answer = await flights.run("issuer", () => {
    ran = true;
    return Promise.resolve("discovery");
  });
  assertEquals([ran, answer], [true, "discovery"]);
});
