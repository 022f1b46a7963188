// Producer writes (node register, job register and purge) as the event stream delivers them.

import { assertEquals } from "../helpers/assert.ts";
import { call, eventsServerTest, rootSecret, subscribe } from "./stream_helpers.ts";

eventsServerTest(
  "event stream delivers a node registered after {} as Node/NodeRegistration with its defaults",
  async (srv) => {
    const s = await subscribe(srv.url, "topic=Node&index=-1");
    const r = await call(srv.url, "PUT", "/v1/node/register", {
      token: rootSecret,
      body: { Node: { Name: "w1" } },
    });
    assertEquals(r.status, 200);
    const f = (await s.nextData())!;
    const e = f.Events![0]!;
    assertEquals([e.Topic, e.Type, e.Namespace, e.FilterKeys], ["Node", "NodeRegistration", "", null]);
    const node = (e.Payload as { Node: Record<string, unknown> }).Node;
    assertEquals([node.Status, node.SchedulingEligibility, node.SecretID, node.Drain], [
      "initializing",
      "eligible",
      "",
      false,
    ]);
    assertEquals(e.Key, node.ID);
    await s.close();
  },
);

eventsServerTest(
  "event stream sends a job register as one frame, Job then Evaluation, and a purge with one-member payloads",
  async (srv) => {
    const s = await subscribe(srv.url, "topic=Job&topic=Evaluation&index=-1");
    let r = await call(srv.url, "PUT", "/v1/jobs", { token: rootSecret, body: { Job: { ID: "web" } } });
    assertEquals(r.status, 200);
    const reg = (await s.nextData())!;
    assertEquals(reg.Events!.map((e) => [e.Topic, e.Type]), [["Job", "JobRegistered"], [
      "Evaluation",
      "JobRegistered",
    ]]);
    r = await call(srv.url, "DELETE", "/v1/job/web?purge=true", { token: rootSecret });
    assertEquals(r.status, 200);
    const dereg = (await s.nextData())!;
    assertEquals(dereg.Events!.map((e) => e.Type), ["JobDeregistered", "JobDeregistered"]);
    for (const e of [...reg.Events!, ...dereg.Events!]) {
      assertEquals(Object.keys(e.Payload as object).length, 1);
    }
    await s.close();
  },
);
