// Seeds a registry with a private hosted box, an unreleased version, an external public box and tokens,
// and takes a snapshot of everything the API shows, so fuzzing can prove hostile requests changed nothing.

import { type Fixture, RegistryApi } from "../registry_clients/registry_api.ts";

export interface SeededRegistry extends Fixture {
  /** The bytes uploaded for acme/devbox 1.0.0 virtualbox. */
  hostedBytes: Uint8Array;
}

export async function seedBoxes(fixture: Fixture): Promise<SeededRegistry> {
  const { api, aliceToken } = fixture;
  const token = aliceToken;
  await api.expectOk("POST", "/api/v1/boxes", {
    token,
    body: { username: "acme", name: "devbox", short_description: "fuzz target", description: "# Devbox" },
  });
  const B = "/api/v1/box/acme/devbox";
  await api.expectOk("POST", `${B}/versions`, { token, body: { version: { version: "1.0.0" } } });
  await api.expectOk("POST", `${B}/version/1.0.0/providers`, {
    token,
    body: { provider: { name: "virtualbox" } },
  });
  const prepared = await api.expectOk("GET", `${B}/version/1.0.0/provider/virtualbox/upload`, { token });
  const hostedBytes = crypto.getRandomValues(new Uint8Array(4096));
  const put = await fetch(String(prepared.upload_path), { method: "PUT", body: hostedBytes });
  if (put.status !== 200) throw new Error(`upload PUT → ${put.status} ${await put.text()}`);
  // An arm64 file of the same provider, created through API v2 (docs/registry.md#vagrant-24), not the default.
  await api.expectOk("POST", "/api/v2/box/acme/devbox/version/1.0.0/providers", {
    token,
    body: {
      provider: {
        name: "virtualbox",
        architecture: "arm64",
        url: "https://downloads.example.invalid/arm.box",
      },
    },
  });
  await api.expectOk("PUT", `${B}/version/1.0.0/release`, { token });
  await api.expectOk("POST", `${B}/versions`, {
    token,
    body: { version: { version: "1.1.0", description: "wip" } },
  });
  await api.expectOk("POST", `${B}/version/1.1.0/providers`, {
    token,
    body: { provider: { name: "libvirt", url: "https://downloads.example.invalid/devbox-1.1.0.box" } },
  });
  await api.expectOk("POST", "/api/v1/boxes", {
    token,
    body: { box: { username: "alice", name: "public-box", is_private: false } },
  });
  const P = "/api/v1/box/alice/public-box";
  await api.expectOk("POST", `${P}/versions`, { token, body: { version: { version: "0.1.0" } } });
  await api.expectOk("POST", `${P}/version/0.1.0/providers`, {
    token,
    body: {
      provider: {
        name: "virtualbox",
        url: "https://downloads.example.invalid/public-0.1.0.box",
        checksum: "a".repeat(64),
        checksum_type: "sha256",
      },
    },
  });
  await api.expectOk("PUT", `${P}/version/0.1.0/release`, { token });
  return { ...fixture, hostedBytes };
}

/** Fields that legitimately move while nothing is written: counters and last-use times. */
const volatileKeys = new Set(["downloads", "last_used_at"]);

function stripVolatile(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(stripVolatile);
  if (value && typeof value === "object") {
    const out: Record<string, unknown> = {};
    for (const [k, v] of Object.entries(value)) if (!volatileKeys.has(k)) out[k] = stripVolatile(v);
    return out;
  }
  return value;
}

async function read(api: RegistryApi, token: string, path: string): Promise<unknown> {
  const answer = await api.call("GET", path, { token });
  return { status: answer.status, body: stripVolatile(answer.body ?? answer.text) };
}

/** Everything an admin can see through the API, as one comparable value. */
export async function snapshotRegistry(seeded: SeededRegistry): Promise<Record<string, unknown>> {
  const { api, adminToken: token } = seeded;
  const paths = [
    "/api/v1/admin/users",
    "/api/v1/admin/organizations",
    "/api/v1/admin/maintenance",
    "/api/v2/admin/sign-in-methods",
    "/api/v2/admin/group-bindings",
    "/api/v2/organization/acme/group-bindings",
    "/api/v2/organization/acme/members",
    "/api/v2/admin/users/alice/identity",
    "/api/v1/admin/users/alice/tokens",
    "/api/v1/admin/users/bob/tokens",
    "/api/v1/admin/users/admin/tokens",
    "/api/v1/user/alice",
    "/api/v1/user/acme",
    "/api/v1/user/bob",
    "/api/v1/search?limit=100",
    "/api/v1/box/acme/devbox",
    "/api/v1/box/acme/devbox/version/1.0.0",
    "/api/v1/box/acme/devbox/version/1.1.0",
    "/api/v1/box/acme/devbox/version/1.0.0/provider/virtualbox",
    "/api/v1/box/acme/devbox/version/1.1.0/provider/libvirt",
    "/api/v1/box/alice/public-box",
    "/api/v1/box/alice/public-box/version/0.1.0/provider/virtualbox",
    "/acme/devbox",
    "/alice/public-box",
    "/api/v2/box/acme/devbox",
    "/api/v2/box/acme/devbox/version/1.0.0/provider/virtualbox/arm64",
    "/api/v2/box/alice/public-box/version/0.1.0/provider/virtualbox/unknown",
    "/api/v2/search?limit=100",
    "/api/v2/vagrant/acme/devbox",
  ];
  const snapshot: Record<string, unknown> = {};
  for (const path of paths) snapshot[path] = await read(api, token, path);
  const download = await fetch(`${api.baseUrl}/acme/boxes/devbox/versions/1.0.0/providers/virtualbox.box`, {
    headers: { Authorization: `Bearer ${token}` },
  });
  const bytes = new Uint8Array(await download.arrayBuffer());
  snapshot["download"] = { status: download.status, same: equalBytes(bytes, seeded.hostedBytes) };
  return snapshot;
}

function equalBytes(a: Uint8Array, b: Uint8Array): boolean {
  return a.length === b.length && a.every((x, i) => x === b[i]);
}
