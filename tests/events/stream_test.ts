// The event stream over HTTP (docs/events.md#streaming-with-curl): headers, ordering, index replay, errors,
// auth, filters, publish, NDJSON.

import { assert, assertEquals } from "../helpers/assert.ts";
import {
  call,
  createToken,
  denied,
  eventsServerTest,
  jobEvent,
  nodeEvent,
  openStream,
  publish,
  putPolicy,
  rootSecret,
  subscribe,
} from "./stream_helpers.ts";

eventsServerTest(
  "event stream answers 200 with the stream headers and {} first when the token is management",
  async (srv) => {
    const s = await openStream(srv.url, "index=-1");
    assertEquals(s.response.status, 200);
    assertEquals(s.response.headers.get("Content-Type"), "application/json");
    assertEquals(s.response.headers.get("Cache-Control"), "no-cache");
    assertEquals(s.response.headers.get("X-Accel-Buffering"), "no");
    assertEquals(s.response.headers.get("Content-Length"), null);
    assertEquals(s.response.headers.get("Content-Encoding"), null);
    assertEquals(await s.next(), {});
    // With a 50 ms heartbeat an idle stream keeps receiving {}.
    for (let i = 0; i < 3; i++) assertEquals(await s.next(2000), {});
    await s.close();
  },
);

eventsServerTest(
  "event stream delivers events with keys in the documented order and event Index equal to the frame's",
  async (srv) => {
    const s = await subscribe(srv.url, "topic=Node");
    const index = await publish(srv.url, [nodeEvent("n1"), nodeEvent("n2", "NodeEvent")]);
    const f = await s.nextData();
    assertEquals(f?.Index, index);
    assertEquals(f?.Events?.length, 2);
    for (const e of f!.Events!) {
      assertEquals(Object.keys(e), ["Topic", "Type", "Key", "Namespace", "FilterKeys", "Index", "Payload"]);
      assertEquals(e.Index, index);
      assertEquals(Object.keys(e.Payload as object).length, 1);
    }
    assertEquals(s.lines.every((l) => !l.includes("\n")), true);
    await s.close();
  },
);

eventsServerTest(
  "event stream replays from index=0, then live; index=N is inclusive; last+1 repeats nothing",
  async (srv) => {
    const indexes: number[] = [];
    for (let i = 0; i < 5; i++) indexes.push(await publish(srv.url, [nodeEvent(`n${i}`)]));
    const all = await subscribe(srv.url, "index=0&topic=Node");
    const backlog = [];
    for (let i = 0; i < 5; i++) backlog.push((await all.nextData())!.Index);
    assertEquals(backlog, indexes);
    const live = await publish(srv.url, [nodeEvent("late")]);
    assertEquals((await all.nextData())!.Index, live);
    await all.close();

    const from = await subscribe(srv.url, `index=${indexes[2]}&topic=Node`);
    assertEquals((await from.nextData())!.Index, indexes[2]);
    await from.close();

    const resume = await subscribe(srv.url, `index=${live + 1}&topic=Node`);
    const next = await publish(srv.url, [nodeEvent("after")]);
    assertEquals((await resume.nextData())!.Index, next);
    await resume.close();
  },
);

eventsServerTest(
  "event stream sends no data for index above newest until a commit, and none before for negative",
  async (srv) => {
    const newest = await publish(srv.url, [nodeEvent("a")]);
    const ahead = await subscribe(srv.url, `index=${newest + 1}&topic=Node`);
    const fromNow = await subscribe(srv.url, `index=-1&topic=Node`);
    const far = await subscribe(srv.url, `index=${newest + 1000}&topic=Node`);
    // Only heartbeats while nothing is committed.
    for (let i = 0; i < 3; i++) assertEquals(await ahead.next(2000), {});
    const next = await publish(srv.url, [nodeEvent("b")]);
    assertEquals((await ahead.nextData())!.Index, next);
    assertEquals((await fromNow.nextData())!.Index, next);
    assertEquals(await far.dataUntilQuiet(300), []);
    await Promise.all([ahead.close(), fromNow.close(), far.close()]);
  },
);

eventsServerTest(
  "event stream rejects a bad index or topic with the exact 400 texts and POST with 405",
  async (srv) => {
    assertEquals(await denied(srv.url, "index=abc", rootSecret), [
      400,
      'Unable to parse index: strconv.Atoi: parsing "abc": invalid syntax',
    ]);
    assertEquals(await denied(srv.url, "index=99999999999999999999", rootSecret), [
      400,
      'Unable to parse index: strconv.Atoi: parsing "99999999999999999999": value out of range',
    ]);
    assertEquals(await denied(srv.url, "topic=A:b:c", rootSecret), [
      400,
      "Invalid topic query: error parsing topics: Invalid key value pair for topic, topic: A:b:c",
    ]);
    const post = await call(srv.url, "POST", "/v1/event/stream", { token: rootSecret });
    assertEquals([post.status, post.text], [405, "Invalid method"]);
  },
);

eventsServerTest(
  "event stream answers 403 before any byte when the token is missing, unknown or insufficient",
  async (srv) => {
    assertEquals(await denied(srv.url, "", null), [403, "Permission denied"]);
    assertEquals(await denied(srv.url, "", crypto.randomUUID()), [403, "Permission denied"]);
    await putPolicy(srv.url, "jobs", 'namespace "default" { policy = "read" }');
    await putPolicy(srv.url, "nodes", 'node { policy = "read" }');
    await putPolicy(srv.url, "all-ns", 'namespace "*" { policy = "read" }');
    const jobs = await createToken(srv.url, ["jobs"]);
    const nodes = await createToken(srv.url, ["nodes"]);
    const allNs = await createToken(srv.url, ["all-ns"]);
    assertEquals((await denied(srv.url, "topic=Job", jobs.SecretID))[0], 200);
    assertEquals(await denied(srv.url, "topic=Job&namespace=other", jobs.SecretID), [
      403,
      "Permission denied",
    ]);
    assertEquals(await denied(srv.url, "topic=Job&namespace=*", jobs.SecretID), [403, "Permission denied"]);
    assertEquals((await denied(srv.url, "topic=Node&topic=NodeDrain", nodes.SecretID))[0], 200);
    for (const q of ["topic=ACLToken", "topic=Box", "", "topic=Node&topic=Job", "topic=Unknown"]) {
      assertEquals(await denied(srv.url, q, nodes.SecretID), [403, "Permission denied"], q);
    }
    const s = await subscribe(srv.url, "topic=Job&namespace=*", allNs.SecretID);
    await publish(srv.url, [jobEvent("web", "default")]);
    await publish(srv.url, [jobEvent("api", "prod")]);
    const got = [(await s.nextData())!, (await s.nextData())!].map((f) => f.Events![0]!.Namespace);
    assertEquals(got, ["default", "prod"]);
    await s.close();
  },
);

eventsServerTest(
  "event stream takes X-Nomad-Token over Authorization and accepts a lowercase bearer scheme",
  async (srv) => {
    const viaBearer = await fetch(`${srv.url}/v1/event/stream`, {
      headers: { authorization: `bearer ${rootSecret}` },
    });
    assertEquals(viaBearer.status, 200);
    await viaBearer.body!.cancel();
    const conflicting = await fetch(`${srv.url}/v1/event/stream`, {
      headers: { "X-Nomad-Token": crypto.randomUUID(), Authorization: `Bearer ${rootSecret}` },
    });
    assertEquals([conflicting.status, await conflicting.text()], [403, "Permission denied"]);
    const basic = await fetch(`${srv.url}/v1/event/stream`, {
      headers: { Authorization: `Basic ${rootSecret}` },
    });
    assertEquals(basic.status, 403);
    await basic.body!.cancel();
  },
);

eventsServerTest(
  "event stream lets tokenless clients stream Node when an anonymous policy grants node read",
  async (srv) => {
    assertEquals(await denied(srv.url, "topic=Node", null), [403, "Permission denied"]);
    await putPolicy(srv.url, "anonymous", 'node { policy = "read" }');
    const s = await subscribe(srv.url, "topic=Node&index=-1", null);
    const index = await publish(srv.url, [nodeEvent("n1")]);
    assertEquals((await s.nextData())!.Index, index);
    await s.close();
  },
);

eventsServerTest(
  "event stream filters by namespace, keys, FilterKeys and the NodeDrain view, once per frame",
  async (srv) => {
    const drain = await subscribe(srv.url, "topic=NodeDrain&index=-1");
    const foo = await subscribe(srv.url, "namespace=foo&index=-1");
    const web = await subscribe(srv.url, "topic=Job:web&topic=Evaluation:web&index=-1");
    const wild = await subscribe(srv.url, "topic=Job&topic=Job:web&index=-1");
    const overlap = await subscribe(srv.url, "topic=Node:n1&topic=*:n1&topic=Node:*&index=-1");
    await publish(srv.url, [nodeEvent("n1", "NodeRegistration")]);
    await publish(srv.url, [nodeEvent("n1", "NodeDrain"), nodeEvent("n1", "NodeEligibility")]);
    await publish(srv.url, [jobEvent("web"), jobEvent("api"), {
      Topic: "Evaluation",
      Type: "JobRegistered",
      Key: "e1",
      FilterKeys: ["web", ""],
      Payload: { Evaluation: { ID: "e1", JobID: "web" } },
    }]);
    await publish(srv.url, [{
      Topic: "ACLPolicy",
      Type: "ACLPolicyUpserted",
      Key: "p",
      Payload: { ACLPolicy: {} },
    }]);
    await publish(srv.url, [jobEvent("api")]);

    const drainFrames = await drain.dataUntilQuiet();
    assertEquals(drainFrames.length, 1);
    assertEquals(drainFrames[0]!.Events!.map((e) => [e.Topic, e.Type]), [["Node", "NodeDrain"], [
      "Node",
      "NodeEligibility",
    ]]);
    const fooTopics = (await foo.dataUntilQuiet()).flatMap((f) => f.Events!.map((e) => e.Topic));
    assertEquals(fooTopics, ["Node", "Node", "Node", "ACLPolicy"]);
    const webFrames = await web.dataUntilQuiet();
    assertEquals(webFrames.length, 1, "a batch without a match makes no frame");
    assertEquals(webFrames[0]!.Events!.map((e) => e.Key), ["web", "e1"]);
    const wildKeys = (await wild.dataUntilQuiet()).flatMap((f) => f.Events!.map((e) => e.Key));
    assertEquals(wildKeys, ["web", "api", "api"]);
    const overlapFrames = await overlap.dataUntilQuiet();
    assertEquals(overlapFrames.map((f) => f.Events!.length), [1, 2]);
    await Promise.all([drain, foo, web, wild, overlap].map((s) => s.close()));
  },
);

eventsServerTest("event publish validates events, forces secrets out and needs management", async (srv) => {
  const bad = async (events: unknown, token = rootSecret) =>
    await call(srv.url, "POST", "/v1/event/publish", { token, body: { Events: events } });
  let r = await bad([nodeEvent("x", "JobRegistered")]);
  assertEquals([r.status, r.text], [400, 'event 0: Type "JobRegistered" is not valid on Topic "Node"']);
  r = await bad([nodeEvent("ok"), { ...nodeEvent("x"), Topic: "NodeDrain", Type: "NodeDrain" }]);
  assertEquals(r.status, 400);
  assert(r.text.startsWith("event 1: "), r.text);
  r = await bad([{ ...nodeEvent("x"), Payload: { Node: {}, Job: {} } }]);
  assertEquals(r.status, 400);
  assert(r.text.startsWith("event 0: Payload"), r.text);
  r = await bad([]);
  assertEquals(r.status, 400);
  r = await bad(Array.from({ length: 1001 }, (_, i) => nodeEvent(`n${i}`)));
  assertEquals(r.status, 400);
  const huge = await call(srv.url, "POST", "/v1/event/publish", {
    token: rootSecret,
    body: JSON.stringify({
      Events: [{ ...nodeEvent("big"), Payload: { Node: { Pad: "x".repeat(9 << 20) } } }],
    }),
  });
  assertEquals([huge.status, huge.text], [413, "Request body too large"]);
  await putPolicy(srv.url, "nodes", 'node { policy = "write" }');
  const client = await createToken(srv.url, ["nodes"]);
  r = await bad([nodeEvent("x")], client.SecretID);
  assertEquals([r.status, r.text], [403, "Permission denied"]);

  const s = await subscribe(srv.url, "topic=ACLToken&topic=Allocation&namespace=*&index=-1");
  const ok = await call(srv.url, "PUT", "/v1/event/publish", {
    token: rootSecret,
    body: {
      Events: [
        {
          Topic: "ACLToken",
          Type: "ACLTokenUpserted",
          Key: "a",
          Payload: { ACLToken: { SecretID: "leak" } },
        },
        {
          Topic: "Allocation",
          Type: "AllocationCreated",
          Key: "al",
          Index: 999999,
          Payload: { Allocation: { ID: "al", Job: { ID: "web" } } },
        },
      ],
    },
  });
  assertEquals(ok.status, 200);
  const index = (ok.json as { Index: number }).Index;
  assertEquals(ok.headers.get("X-Nomad-Index"), String(index));
  const f = (await s.nextData())!;
  assertEquals(f.Index, index);
  assertEquals((f.Events![0]!.Payload as { ACLToken: { SecretID: string } }).ACLToken.SecretID, "");
  assertEquals((f.Events![1]!.Payload as { Allocation: { Job: null } }).Allocation.Job, null);
  assertEquals(f.Events![1]!.Namespace, "default");
  await s.close();
});

eventsServerTest(
  "event stream read by curl -N is NDJSON: every line one JSON object ending in a newline",
  async (srv) => {
    await publish(srv.url, [nodeEvent("n1"), jobEvent("web")]);
    const out = await new Deno.Command("curl", {
      args: [
        "-sS",
        "-N",
        "--max-time",
        "1",
        "-H",
        `X-Nomad-Token: ${rootSecret}`,
        `${srv.url}/v1/event/stream?index=0&topic=Node&topic=Job`,
      ],
      stdout: "piped",
      stderr: "null",
    }).output();
    const body = new TextDecoder().decode(out.stdout);
    assert(body.endsWith("\n"), "ends after a complete line");
    const lines = body.slice(0, -1).split("\n");
    assertEquals(lines[0], "{}");
    assert(lines.length >= 3);
    for (const line of lines) {
      const v = JSON.parse(line);
      assert(typeof v === "object" && v !== null && !Array.isArray(v), line);
    }
    assertEquals(lines.filter((l) => l.includes('"Events"')).length, 1, body);
  },
);
