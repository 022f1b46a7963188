// Job producers seen through the event stream and guarded by namespace ACLs.

import { assert, assertEquals } from "../helpers/assert.ts";
import type { TestServer } from "../helpers/server.ts";
import {
  call,
  createToken,
  eventsServerTest,
  type Frame,
  putPolicy,
  rootSecret,
  subscribe,
  withSubscription,
} from "./stream_helpers.ts";

async function register(ts: TestServer, job: Record<string, unknown>, token = rootSecret) {
  const r = await call(ts.url, "PUT", "/v1/jobs", { token, body: { Job: job } });
  assertEquals(r.status, 200, r.text);
  return r.json as { EvalID: string; Index: number };
}

const summary = (frames: Frame[]) =>
  frames.flatMap((f) => f.Events ?? []).map((e) => `${e.Topic}/${e.Type}/${e.Key}`);

eventsServerTest(
  "job register and DELETE stream one frame each: Job, then Evaluation",
  async (ts) => {
    await withSubscription(ts.url, "topic=Job&topic=Evaluation", async (s) => {
      const reg = await register(ts, { ID: "web" });
      const frame = await s.nextData();
      assertEquals(frame?.Index, reg.Index);
      assertEquals(summary([frame!]), ["Job/JobRegistered/web", `Evaluation/JobRegistered/${reg.EvalID}`]);
      for (const e of frame!.Events!) assertEquals(e.Index, reg.Index);

      const del = await call(ts.url, "DELETE", "/v1/job/web", { token: rootSecret });
      const delIndex = (del.json as { Index: number }).Index;
      const delFrame = await s.nextData();
      assertEquals(delFrame?.Index, delIndex);
      assertEquals(delFrame!.Events!.map((e) => `${e.Topic}/${e.Type}`), [
        "Job/JobDeregistered",
        "Evaluation/JobDeregistered",
      ]);

      const purge = await call(ts.url, "DELETE", "/v1/job/web?purge=true", { token: rootSecret });
      assertEquals(purge.status, 200);
      const purgeFrame = await s.nextData();
      assertEquals(purgeFrame!.Events!.map((e) => `${e.Topic}/${e.Type}`), [
        "Job/JobDeregistered",
        "Evaluation/JobDeregistered",
      ]);
      for (const e of purgeFrame!.Events!) assertEquals(Object.keys(e.Payload as object).length, 1);
      assertEquals(Object.keys(purgeFrame!.Events![0]!.Payload as object), ["Job"]);
    });
  },
);

eventsServerTest(
  "Job:web narrows, Evaluation:web matches by FilterKeys, and a bare Job wins",
  async (ts) => {
    const narrow = await subscribe(ts.url, "topic=Job:web&index=-1");
    const evals = await subscribe(ts.url, "topic=Evaluation:web&index=-1");
    const both = await subscribe(ts.url, "topic=Job&topic=Job:web&index=-1");
    try {
      const web = await register(ts, { ID: "web" });
      await register(ts, { ID: "api" });
      assertEquals(summary(await narrow.dataUntilQuiet(400)), ["Job/JobRegistered/web"]);
      assertEquals(summary(await evals.dataUntilQuiet(400)), [`Evaluation/JobRegistered/${web.EvalID}`]);
      assertEquals(summary(await both.dataUntilQuiet(400)), [
        "Job/JobRegistered/web",
        "Job/JobRegistered/api",
      ]);
    } finally {
      await Promise.all([narrow.close(), evals.close(), both.close()]);
    }
  },
);

eventsServerTest(
  "namespace=* streams jobs of every namespace; a namespace filter keeps its own",
  async (ts) => {
    const all = await subscribe(ts.url, "topic=Job&namespace=*&index=-1");
    const prod = await subscribe(ts.url, "topic=Job&namespace=prod&index=-1");
    try {
      await register(ts, { ID: "a" });
      await register(ts, { ID: "b", Namespace: "prod" });
      assertEquals(summary(await all.dataUntilQuiet(400)), ["Job/JobRegistered/a", "Job/JobRegistered/b"]);
      assertEquals(summary(await prod.dataUntilQuiet(400)), ["Job/JobRegistered/b"]);
    } finally {
      await Promise.all([all.close(), prod.close()]);
    }
  },
);

eventsServerTest(
  "job endpoints need submit-job, list-jobs and read-job in the job's namespace",
  async (ts) => {
    await putPolicy(ts.url, "read-default", `namespace "default" { policy = "read" }`);
    await putPolicy(
      ts.url,
      "write-default",
      `namespace "default" { policy = "write" }\nnamespace "prod" { policy = "deny" }`,
    );
    const reader = await createToken(ts.url, ["read-default"]);
    const writer = await createToken(ts.url, ["write-default"]);

    const anonymous = await call(ts.url, "PUT", "/v1/jobs", { body: { Job: { ID: "web" } } });
    assertEquals([anonymous.status, anonymous.text], [403, "Permission denied"]);
    const readOnly = await call(ts.url, "PUT", "/v1/jobs", {
      token: reader.SecretID,
      body: { Job: { ID: "web" } },
    });
    assertEquals([readOnly.status, readOnly.text], [403, "Permission denied"]);
    const otherNs = await call(ts.url, "PUT", "/v1/jobs", {
      token: writer.SecretID,
      body: { Job: { ID: "web", Namespace: "prod" } },
    });
    assertEquals([otherNs.status, otherNs.text], [403, "Permission denied"]);

    await register(ts, { ID: "web" }, writer.SecretID);
    await register(ts, { ID: "web", Namespace: "prod" });

    assertEquals((await call(ts.url, "GET", "/v1/job/web", { token: reader.SecretID })).status, 200);
    assertEquals(
      (await call(ts.url, "GET", "/v1/job/web?namespace=prod", { token: writer.SecretID })).status,
      403,
    );
    assertEquals(
      (await call(ts.url, "GET", "/v1/jobs?namespace=prod", { token: reader.SecretID })).status,
      403,
    );
    const visible = (await call(ts.url, "GET", "/v1/jobs?namespace=*", { token: reader.SecretID }))
      .json as Array<
        Record<string, unknown>
      >;
    assertEquals(visible.map((j) => `${j.Namespace}/${j.ID}`), ["default/web"]);

    const del = await call(ts.url, "DELETE", "/v1/job/web", { token: reader.SecretID });
    assertEquals([del.status, del.text], [403, "Permission denied"]);
    const ok = await call(ts.url, "DELETE", "/v1/job/web", { token: writer.SecretID });
    assertEquals(ok.status, 200);
    const bad = await call(ts.url, "GET", "/v1/jobs", { token: crypto.randomUUID() });
    assertEquals([bad.status, bad.text], [403, "ACL token not found"]);
    assert(true);
  },
);
