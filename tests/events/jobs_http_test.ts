// Job producers over HTTP with ACLs off: register defaults and validation, evaluations, deregister, reads.

import { assert, assertEquals, assertMatch } from "../helpers/assert.ts";
import type { TestServer } from "../helpers/server.ts";
import { assertBodiesRefused, withServer } from "./nodes_support.ts";
import { call } from "./stream_helpers.ts";

type Job = Record<string, unknown>;

async function registerJob(ts: TestServer, job: Job, query = ""): Promise<Record<string, unknown>> {
  const r = await call(ts.url, "PUT", `/v1/jobs${query}`, { body: { Job: job } });
  assertEquals(r.status, 200, r.text);
  return r.json as Record<string, unknown>;
}

/** The committed log line with this Index (events as streamed, plus recovery members). */
async function batchAt(
  ts: TestServer,
  index: number,
): Promise<{ Index: number; Events: Array<Record<string, unknown>> }> {
  for await (const { index: i, line } of ts.server.data.log.read(index)) {
    if (i === index) return JSON.parse(line);
  }
  throw new Error(`no batch ${index}`);
}

withServer("job register applies the job defaults and answers with the eval and indexes", async (ts) => {
  const r = await call(ts.url, "POST", "/v1/jobs", {
    body: { Job: { ID: "web", TaskGroups: [{ Name: "g" }] } },
  });
  assertEquals(r.status, 200, r.text);
  const answer = r.json as Record<string, unknown>;
  assertEquals(Object.keys(answer), ["EvalID", "EvalCreateIndex", "JobModifyIndex", "Warnings", "Index"]);
  const index = answer.Index as number;
  assertMatch(answer.EvalID as string, /^[0-9a-f-]{36}$/);
  assertEquals(answer.EvalCreateIndex, index);
  assertEquals(answer.JobModifyIndex, index);
  assertEquals(answer.Warnings, "");
  assertEquals(r.headers.get("X-Nomad-Index"), String(index));

  const got = await call(ts.url, "GET", "/v1/job/web");
  assertEquals(got.status, 200);
  const job = got.json as Job;
  for (
    const [k, v] of Object.entries({
      ID: "web",
      Name: "web",
      Namespace: "default",
      Region: "global",
      Type: "service",
      Priority: 50,
      Datacenters: ["*"],
      NodePool: "default",
      Status: "pending",
      Stop: false,
      Version: 0,
      CreateIndex: index,
      ModifyIndex: index,
      JobModifyIndex: index,
      TaskGroups: [{ Name: "g" }],
    })
  ) assertEquals(job[k], v, k);
  assert(Math.abs((job.SubmitTime as number) / 1e6 - Date.now()) < 600_000, "SubmitTime is Unix ns");
});

withServer("job register commits Job then Evaluation, both JobRegistered, in one batch", async (ts) => {
  const answer = await registerJob(ts, { ID: "web", Namespace: "apps", Type: "batch", Priority: 70 });
  const batch = await batchAt(ts, answer.Index as number);
  assertEquals(batch.Events.map((e) => [e.Topic, e.Type, e.Key]), [
    ["Job", "JobRegistered", "web"],
    ["Evaluation", "JobRegistered", answer.EvalID],
  ]);
  const [jobEvent, evalEvent] = batch.Events as [Record<string, unknown>, Record<string, unknown>];
  assertEquals(jobEvent.Namespace, "apps");
  assertEquals(jobEvent.FilterKeys, null);
  assertEquals(Object.keys(jobEvent.Payload as object), ["Job"]);
  assertEquals(evalEvent.FilterKeys, ["web", ""]);
  const evaluation = (evalEvent.Payload as { Evaluation: Record<string, unknown> }).Evaluation;
  assertEquals(Object.keys(evalEvent.Payload as object), ["Evaluation"]);
  for (
    const [k, v] of Object.entries({
      ID: answer.EvalID,
      Namespace: "apps",
      Priority: 70,
      Type: "batch",
      TriggeredBy: "job-register",
      JobID: "web",
      JobModifyIndex: answer.Index,
      DeploymentID: "",
      Status: "pending",
      CreateIndex: answer.Index,
      ModifyIndex: answer.Index,
    })
  ) assertEquals(evaluation[k], v, k);
  assert(typeof evaluation.CreateTime === "number" && (evaluation.CreateTime as number) > 1e18);
});

withServer("job register takes the namespace from the body, else the query, else default", async (ts) => {
  await registerJob(ts, { ID: "a", Namespace: "body" }, "?namespace=query");
  await registerJob(ts, { ID: "b" }, "?namespace=query");
  await registerJob(ts, { ID: "c" });
  assertEquals((await call(ts.url, "GET", "/v1/job/a?namespace=body")).status, 200);
  assertEquals((await call(ts.url, "GET", "/v1/job/b?namespace=query")).status, 200);
  assertEquals((await call(ts.url, "GET", "/v1/job/c")).status, 200);
  assertEquals((await call(ts.url, "GET", "/v1/job/a")).text, "job not found");
});

withServer("job register rejects invalid jobs with Nomad's texts", async (ts) => {
  const cases: Array<[unknown, string | RegExp]> = [
    [{}, "Job must be specified"],
    [{ Job: {} }, "Missing job ID"],
    [{ Job: { ID: "has space" } }, "Job ID contains a space"],
    [{ Job: { ID: "nul\u0000" } }, "Job ID contains a null character"],
    [{ Job: { ID: "x", Type: "daemon" } }, `Invalid job type: "daemon"`],
    [{ Job: { ID: "x", Priority: 0 } }, "Job priority must be between [1, 100]"],
    [{ Job: { ID: "x", Priority: 101 } }, "Job priority must be between [1, 100]"],
    [{ Job: { ID: "x", Namespace: "*" } }, `Invalid namespace "*"`],
    [
      { Job: { ID: 5 } },
      /^Failed to decode request body: json: cannot unmarshal number 5 into Go struct field Job.ID of type string$/,
    ],
    [
      { Job: { ID: "x", Datacenters: "dc1" } },
      /^Failed to decode request body: .*Job.Datacenters of type \[\]string$/,
    ],
    [{ Job: "web" }, /^Failed to decode request body: /],
  ];
  await assertBodiesRefused(ts, "/v1/jobs", "/v1/jobs", cases);
});

withServer(
  "job re-register bumps Version and keeps CreateIndex; tokens in the body are not stored",
  async (ts) => {
    const first = await registerJob(ts, { ID: "web" });
    const second = await registerJob(ts, {
      ID: "web",
      Priority: 60,
      VaultToken: "hvs.secret",
      ConsulToken: "c-secret",
    });
    const job = (await call(ts.url, "GET", "/v1/job/web")).json as Job;
    assertEquals(job.Version, 1);
    assertEquals(job.Priority, 60);
    assertEquals(job.CreateIndex, first.Index);
    assertEquals(job.JobModifyIndex, second.Index);
    const batch = await batchAt(ts, second.Index as number);
    assert(!JSON.stringify(batch).includes("secret"));
    assertEquals(job.VaultToken, "");
  },
);

withServer("periodic and parameterized jobs get no evaluation", async (ts) => {
  for (
    const extra of [{ Periodic: { Spec: "@daily", Enabled: true } }, {
      ParameterizedJob: { Payload: "optional" },
    }]
  ) {
    const answer = await registerJob(ts, { ID: `j${Object.keys(extra)[0]}`, Type: "batch", ...extra });
    assertEquals(answer.EvalID, "");
    assertEquals(answer.EvalCreateIndex, 0);
    const batch = await batchAt(ts, answer.Index as number);
    assertEquals(batch.Events.map((e) => e.Topic), ["Job"]);
  }
  const stubs = (await call(ts.url, "GET", "/v1/jobs")).json as Array<Record<string, unknown>>;
  assertEquals(stubs.map((s) => [s.Periodic, s.ParameterizedJob]), [[false, true], [true, false]]);
});

withServer("job DELETE stops the job with a JobDeregistered pair; purge removes it", async (ts) => {
  const reg = await registerJob(ts, { ID: "web" });
  const del = await call(ts.url, "DELETE", "/v1/job/web");
  assertEquals(del.status, 200);
  const answer = del.json as Record<string, unknown>;
  assertEquals(Object.keys(answer), ["EvalID", "EvalCreateIndex", "JobModifyIndex", "Index"]);
  const index = answer.Index as number;
  assert(index > (reg.Index as number));
  const batch = await batchAt(ts, index);
  assertEquals(batch.Events.map((e) => [e.Topic, e.Type]), [["Job", "JobDeregistered"], [
    "Evaluation",
    "JobDeregistered",
  ]]);
  const evaluation = (batch.Events[1]!.Payload as { Evaluation: Record<string, unknown> }).Evaluation;
  assertEquals(evaluation.TriggeredBy, "job-deregister");
  assertEquals(evaluation.ID, answer.EvalID);
  const stopped = (await call(ts.url, "GET", "/v1/job/web")).json as Job;
  assertEquals([stopped.Stop, stopped.Status, stopped.JobModifyIndex], [true, "dead", index]);

  const purge = await call(ts.url, "DELETE", "/v1/job/web?purge=true");
  assertEquals(purge.status, 200);
  const purgeBatch = await batchAt(ts, (purge.json as { Index: number }).Index);
  assertEquals(purgeBatch.Events.map((e) => [e.Topic, e.Type]), [["Job", "JobDeregistered"], [
    "Evaluation",
    "JobDeregistered",
  ]]);
  for (const e of purgeBatch.Events) assertEquals(Object.keys(e.Payload as object).length, 1);
  assertEquals((purgeBatch.Events[0]!.Payload as { Job: Job }).Job.Status, "dead");
  const gone = await call(ts.url, "GET", "/v1/job/web");
  assertEquals([gone.status, gone.text], [404, "job not found"]);
  const again = await call(ts.url, "DELETE", "/v1/job/web");
  assertEquals([again.status, again.text], [404, "job not found"]);
});

withServer("job list filters by namespace, * and prefix, with stub fields in a fixed order", async (ts) => {
  await registerJob(ts, { ID: "web", Meta: { team: "a" } });
  await registerJob(ts, { ID: "worker" });
  await registerJob(ts, { ID: "web", Namespace: "prod" });
  const list = await call(ts.url, "GET", "/v1/jobs");
  assertEquals(list.headers.get("X-Nomad-KnownLeader"), "true");
  const stubs = list.json as Array<Record<string, unknown>>;
  assertEquals(stubs.map((s) => s.ID), ["web", "worker"]);
  assertEquals(Object.keys(stubs[0]!), [
    "ID",
    "ParentID",
    "Name",
    "Namespace",
    "Datacenters",
    "NodePool",
    "Type",
    "Priority",
    "Periodic",
    "ParameterizedJob",
    "Stop",
    "Status",
    "StatusDescription",
    "SubmitTime",
    "Meta",
    "CreateIndex",
    "ModifyIndex",
    "JobModifyIndex",
  ]);
  assertEquals(stubs[0]!.Meta, { team: "a" });
  const all = (await call(ts.url, "GET", "/v1/jobs?namespace=*")).json as Array<Record<string, unknown>>;
  assertEquals(all.map((s) => `${s.Namespace}/${s.ID}`), ["default/web", "default/worker", "prod/web"]);
  const prefixed = (await call(ts.url, "GET", "/v1/jobs?namespace=*&prefix=wo")).json as Array<
    Record<string, unknown>
  >;
  assertEquals(prefixed.map((s) => s.ID), ["worker"]);
  assertEquals(((await call(ts.url, "GET", "/v1/jobs?namespace=prod")).json as unknown[]).length, 1);
});
