// One half of the checksum pair sent as "" (the other left out or null = unchanged): the stored pair must stay "both
// or neither", so it is a no-op without a checksum and a 422 while one is set (docs/registry.md#uploads-and-limits).

import { withStarted } from "../helpers/fixture.ts";
import { assertEquals } from "../helpers/assert.ts";
import { type Answer, createUser, type Fixture, startRegistry } from "./helpers.ts";

const V = "/api/v1/box/alice/devbox/version/1.0.0";
const sum = "b".repeat(64);
const together = ["Checksum and checksum type must be given together"];

/** alice's box devbox 1.0.0 with a virtualbox provider created from `provider` fields. */
function withProvider(
  provider: Record<string, unknown>,
  fn: (api: { put(body: unknown): Promise<Answer>; read(): Promise<Answer> }) => Promise<void>,
): Promise<void> {
  return withStarted(startRegistry, async (f: Fixture) => {
    const token = await createUser(f, "alice");
    await f.api.post("/api/v1/boxes", { name: "devbox" }, { token });
    await f.api.post("/api/v1/box/alice/devbox/versions", { version: { version: "1.0.0" } }, { token });
    const created = await f.api.post(`${V}/providers`, { provider: { name: "virtualbox", ...provider } }, {
      token,
    });
    assertEquals(created.status, 200, created.text);
    await fn({
      put: (body) => f.api.put(`${V}/provider/virtualbox`, body, { token }),
      read: () => f.api.get(`${V}/provider/virtualbox`, { token }),
    });
  });
}

Deno.test("clearing one checksum half is a no-op when the provider has no checksum", () =>
  withProvider({ checksum_type: "" }, async (api) => {
    // The CLI's `provider update --checksum-type ""` sends the checksum it never loaded as null.
    for (const half of [{ checksum_type: "" }, { checksum: "" }, { checksum: null, checksum_type: "" }]) {
      const r = await api.put({ provider: half });
      assertEquals(r.status, 200, `${JSON.stringify(half)}: ${r.text}`);
      const read = (await api.read()).body;
      assertEquals([read.checksum, read.checksum_type], [null, null]);
    }
  }));

Deno.test("clearing one checksum half is a 422 while the provider has a checksum", () =>
  withProvider({ checksum: sum, checksum_type: "sha256" }, async (api) => {
    for (
      const half of [
        { checksum_type: "" },
        { checksum: "" },
        { checksum: null, checksum_type: "" },
        { checksum: "", checksum_type: null },
        { checksum: sum, checksum_type: "" },
      ]
    ) {
      const r = await api.put({ provider: half });
      assertEquals([r.status, r.body.errors], [422, together], JSON.stringify(half));
      const read = (await api.read()).body;
      assertEquals([read.checksum, read.checksum_type], [sum, "sha256"], "the stored pair is unchanged");
    }
    const cleared = await api.put({ provider: { checksum: "", checksum_type: "" } });
    assertEquals(cleared.status, 200, cleared.text);
    const read = (await api.read()).body;
    assertEquals([read.checksum, read.checksum_type], [null, null]);
  }));
