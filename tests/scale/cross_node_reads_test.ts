// Two nodes behind a load balancer that alternates between them: a client's next request, sent the moment its
// write was acknowledged by one node, is answered by the other as if by the same node — what it just created is
// found, a token just issued works, a write builds on the previous one — in all three API families; a missing
// thing is still a 404, and while PostgreSQL is down reads are answered from the node's view. (A read of
// something that exists may still show its state of a few milliseconds ago: lib/router.ts ClusterView.) An SMS
// code and a web console session work on any node.

import { assert, assertEquals } from "../helpers/assert.ts";
import { Client as RegistryClient } from "../registry/helpers.ts";
import { adminPassword, Client as AuthClient, login } from "../authmethods/helpers.ts";
import { call, rootSecret } from "../events/stream_helpers.ts";
import { clusterTest, eventually } from "./helpers.ts";
import { WebClient } from "../console/helpers.ts";
import { createSmsUser, startSmsSink } from "./sms_sink.ts";

/** Pairs of requests per kind; without catching up, about one in four such reads missed here. */
const rounds = 60;

clusterTest(
  "a write acknowledged by one node is seen by the next request on the other, in every family",
  {},
  async (cluster) => {
    for (const name of ["one", "two"]) await cluster.spawn(name);
    const urls = cluster.started.map((n) => n.url);
    /** The node after `i` requests of a load balancer alternating between the two. */
    const node = (i: number) => urls[i % 2]!;
    // Every miss is collected with what it was, so a failure shows the whole picture.
    const misses: string[] = [];
    const expect = (what: string, status: number, wanted = 200) => {
      if (status !== wanted) misses.push(`${what}: ${status}`);
    };

    // Registry: a login's token, a box, a version, a provider, each used at once on the other node.
    for (let i = 0; i < rounds; i++) {
      const token = await new RegistryClient(node(i)).login("admin", "admin-password-1");
      const next = new RegistryClient(node(i + 1));
      expect(`token ${i}`, (await next.get("/api/v1/authenticate", { token })).status);
      const box = { box: { username: "admin", name: `box${i}` } };
      expect(
        `create box${i}`,
        (await new RegistryClient(node(i)).post("/api/v1/boxes", box, { token })).status,
      );
      expect(`read box${i}`, (await next.get(`/api/v1/box/admin/box${i}`, { token })).status);
      const version = { version: { version: "1.0.0" } };
      const created = await next.post(`/api/v1/box/admin/box${i}/versions`, version, { token });
      expect(`create box${i} 1.0.0`, created.status);
      const provider = { provider: { name: "virtualbox", url: "https://files.example.com/a.box" } };
      const onFirst = new RegistryClient(node(i));
      const path = `/api/v1/box/admin/box${i}/version/1.0.0`;
      expect(
        `add provider to box${i}`,
        (await onFirst.post(`${path}/providers`, provider, { token })).status,
      );
      expect(`read provider of box${i}`, (await next.get(`${path}/provider/virtualbox`, { token })).status);
      // A file uploaded through the other node to a provider added on this one: the upload session (a GET that
      // writes) on this node, the bytes through the other (every fourth round: an upload takes a while).
      if (i % 4 === 0) {
        const hosted = `${path}/provider/libvirt`;
        expect(
          `add libvirt to box${i}`,
          (await onFirst.post(`${path}/providers`, { provider: { name: "libvirt" } }, { token })).status,
        );
        const prepared = await next.get(`${hosted}/upload`, { token });
        expect(`prepare an upload to box${i}`, prepared.status);
        const uploadPath = new URL(String(prepared.body?.upload_path), node(i)).pathname;
        const put = await fetch(`${node(i)}${uploadPath}`, { method: "PUT", body: `box file ${i}` });
        await put.body?.cancel();
        expect(`upload to box${i} through the other node`, put.status);
      }
      // Released on the other node: the release sees the providers just added.
      expect(`release box${i} 1.0.0`, (await next.put(`${path}/release`, {}, { token })).status);
    }
    const registryToken = await new RegistryClient(urls[0]!).login("admin", "admin-password-1");
    expect(
      "a box nobody created",
      (await new RegistryClient(urls[1]!).get("/api/v1/box/admin/nothing", { token: registryToken }))
        .status,
      404,
    );

    // Auth methods: a login token, a method, and an update building on the previous one's version.
    const anon = new AuthClient(urls[0]!);
    const methods = await anon.get("/v1/auth-methods?scope_id=global");
    const primary = methods.body.items.find((m: { is_primary?: boolean }) => m.is_primary).id as string;
    for (let i = 0; i < rounds; i++) {
      const authToken = await login(new AuthClient(node(i)), primary, "admin", adminPassword);
      const [here, there] = [new AuthClient(node(i), authToken), new AuthClient(node(i + 1), authToken)];
      const created = await here.post("/v1/auth-methods", {
        scope_id: "global",
        type: "password",
        name: `m${i}`,
      });
      expect(`create method ${i}`, created.status);
      const id = created.body.id as string;
      const read = await there.get(`/v1/auth-methods/${id}`);
      expect(`read method ${i} with a token from the other node`, read.status);
      const first = await here.patch(`/v1/auth-methods/${id}`, {
        version: created.body.version,
        description: "a",
      });
      expect(`update method ${i}`, first.status);
      const second = await there.patch(`/v1/auth-methods/${id}`, {
        version: first.body.version,
        description: "b",
      });
      expect(`update method ${i} again on the other node`, second.status);
    }

    // Event stream ACL: a token created on one node is accepted by the other at once.
    for (let i = 0; i < rounds; i++) {
      const created = await call(node(i), "POST", "/v1/acl/token", {
        token: rootSecret,
        body: { Name: `t${i}`, Type: "management" },
      });
      if (created.status !== 200) {
        throw new Error(`creating an ACL token: ${created.status} ${created.text}`);
      }
      const secret = String((created.json as { SecretID: string }).SecretID);
      expect(
        `acl token ${i} on the other node`,
        (await call(node(i + 1), "GET", "/v1/acl/token/self", { token: secret })).status,
      );
    }
    assertEquals(misses, []);

    // PostgreSQL down: reads are still answered from each node's view (a miss after trying to catch up).
    await cluster.pg.halt();
    try {
      for (const url of urls) {
        const client = new RegistryClient(url);
        const started = Date.now();
        assertEquals((await client.get("/api/v1/box/admin/box0", { token: registryToken })).status, 200);
        assertEquals((await client.get("/api/v1/box/admin/nothing", { token: registryToken })).status, 404);
        assertEquals(await fetch(`${url}/health`).then((r) => r.body?.cancel()), undefined);
        const took = Date.now() - started;
        if (took > 5000) throw new Error(`reads on ${url} took ${took} ms while PostgreSQL was down`);
      }
    } finally {
      await cluster.pg.start();
    }
    await eventually(
      "writes again",
      async () => {
        const r = await new RegistryClient(urls[1]!).post("/api/v1/boxes", {
          box: { username: "admin", name: "after" },
        }, {
          token: registryToken,
        });
        return r.status === 200 ? true : undefined;
      },
      20_000,
      200,
    );
  },
);

clusterTest("an SMS code requested through one node logs in once through the other", {}, async (cluster) => {
  const sink = startSmsSink(cluster);
  for (const name of ["one", "two"]) await cluster.spawn(name, sink.env);
  const [one, two] = cluster.started.map((n) => new RegistryClient(n.url)) as [
    RegistryClient,
    RegistryClient,
  ];
  await createSmsUser(one);
  const credentials = { user: { login: "sam", password: "sam-password" } };
  const requested = await one.post("/api/v1/two-factor/request-code", {
    ...credentials,
    two_factor: { delivery_method: "sms" },
  });
  assertEquals(requested.status, 200, requested.text);
  assertEquals(sink.messages.length, 1);
  const withCode = { ...credentials, two_factor: { code: sink.messages[0]!.code } };
  const login = await two.post("/api/v1/authenticate", withCode);
  assertEquals(login.status, 200, login.text);
  // Used up everywhere: the same code again, on either node, is refused.
  for (const node of [one, two]) {
    assertEquals((await node.post("/api/v1/authenticate", withCode)).status, 406);
  }
});

clusterTest(
  "the web console keeps a browser signed in across nodes, with what each page leaves",
  {},
  async (cluster) => {
    for (const name of ["one", "two"]) await cluster.spawn(name);
    const [a, b] = cluster.started.map((n) => new WebClient(n.url)) as [WebClient, WebClient];
    /** The browser's cookies and form token, carried to the other node (a balancer alternating between them). */
    const moveTo = (from: WebClient, to: WebClient) => {
      to.cookies.clear();
      for (const [k, v] of from.cookies) to.cookies.set(k, v);
      to.csrf = from.csrf;
      return to;
    };
    assertEquals((await a.signIn("admin", "admin-password-1")).status, 303);
    const tokensPage = await moveTo(a, b).get("/ui/settings/tokens");
    assertEquals(tokensPage.status, 200, tokensPage.text.slice(0, 300));
    assert(tokensPage.text.includes("Sign out admin"), "signed in on the other node");
    // A token made through node two is shown once by node one, with the message the post left.
    const made = await b.postForm("/ui/settings/tokens", { description: "from node two" });
    assertEquals(made.status, 303, made.text.slice(0, 300));
    const shown = await moveTo(b, a).get("/ui/settings/tokens");
    assert(/wharf_[A-Za-z0-9_-]{20,}/.test(shown.text), "the new token shown on the other node");
    const again = await moveTo(a, b).get("/ui/settings/tokens");
    assert(!/wharf_[A-Za-z0-9_-]{20,}/.test(again.text), "shown once");
    // Signed out through node two: signed out on node one too.
    assertEquals((await b.postForm("/ui/logout", {})).status, 303);
    const after = await moveTo(b, a).get("/ui/settings/tokens");
    assert(!after.text.includes("Sign out admin"), "still signed in on the other node after signing out");
  },
);
