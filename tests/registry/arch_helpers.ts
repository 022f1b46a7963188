// Helpers for the architecture and API v2 tests: a box with a version, v2 provider calls, the default flags
// of a version as the v2 API shows them, and the provider events of the log.

import { assertEquals } from "../helpers/assert.ts";
import type { Fixture } from "./helpers.ts";
import { loggedEvents } from "../helpers/stored.ts";

export const V1 = "/api/v1/box/alice/devbox/version/1.0.0";
export const V2 = "/api/v2/box/alice/devbox/version/1.0.0";

/** alice's public box alice/devbox with an unreleased version 1.0.0. */
export async function boxWithVersion(f: Fixture, token: string): Promise<void> {
  const box = await f.api.post("/api/v1/boxes", { name: "devbox", is_private: false }, { token });
  assertEquals(box.status, 200, box.text);
  const v = await f.api.post("/api/v1/box/alice/devbox/versions", { version: { version: "1.0.0" } }, {
    token,
  });
  assertEquals(v.status, 200, v.text);
}

/** POST a provider through v2 (`fields` beside name, e.g. architecture, default_architecture, url). */
export async function createV2(
  f: Fixture,
  token: string,
  name: string,
  fields: Record<string, unknown> = {},
  status = 200,
) {
  const a = await f.api.post(`${V2}/providers`, { provider: { name, ...fields } }, { token });
  assertEquals(a.status, status, a.text);
  return a;
}

/** `name/architecture` of every provider of the version (v2 view) with its default flag, in creation order. */
export async function defaults(f: Fixture, token: string): Promise<Record<string, boolean>> {
  const v = await f.api.get(V2, { token });
  assertEquals(v.status, 200, v.text);
  return Object.fromEntries(
    v.body.providers.map((p: { name: string; architecture: string; default_architecture: boolean }) => [
      `${p.name}/${p.architecture}`,
      p.default_architecture,
    ]),
  );
}

/** [Type, Key] of the provider events logged so far, and their payloads. */
export async function providerEvents(f: Fixture) {
  const events = (await loggedEvents(f.srv)).filter((e) => String(e.Type).startsWith("Provider"));
  return {
    keys: events.map((e) => [e.Type, e.Key]),
    payloads: events.map((e) => (e.Payload as { Provider: Record<string, unknown> }).Provider),
  };
}

export const URL_A = "https://files.example.com/a.box";
