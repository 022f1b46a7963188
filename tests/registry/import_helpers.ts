// Helpers for the import tests: a source wharf with an organization worth importing, a run of the importer
// with captured output, and the v2 JSON of a box with its URLs left out (they name another origin).

import { createHash } from "node:crypto";
import { assertEquals } from "../helpers/assert.ts";
import { runImport } from "../../cli/import/mod.ts";
import { Client, createOrg, createUser, type Fixture, startRegistry } from "./helpers.ts";

export interface SourceOrg {
  /** alice: owner of acme on the source. */
  token: string;
  /** Every hosted file by `box version provider/arch`. */
  files: Map<string, Uint8Array>;
}

export function bytes(size: number, seed: number): Uint8Array<ArrayBuffer> {
  const out = new Uint8Array(size);
  let x = seed * 2654435761 >>> 0;
  for (let i = 0; i < size; i++) {
    x = (x * 1103515245 + 12345) >>> 0;
    out[i] = x >>> 24;
  }
  return out;
}

export function hex(algorithm: string, data: Uint8Array): string {
  return createHash(algorithm).update(data).digest("hex");
}

interface ProviderSpec {
  name: string;
  architecture: string;
  default_architecture?: boolean;
  file?: Uint8Array<ArrayBuffer>;
  checksum_type?: string;
  url?: string;
}

export async function addProvider(f: Fixture, token: string, tag: string, version: string, p: ProviderSpec) {
  const v = `/api/v2/box/${tag}/version/${version}`;
  const body: Record<string, unknown> = { name: p.name, architecture: p.architecture };
  if (p.default_architecture !== undefined) body.default_architecture = p.default_architecture;
  if (p.url) body.url = p.url;
  if (p.checksum_type) {
    body.checksum_type = p.checksum_type;
    body.checksum = hex(p.checksum_type, p.file ?? new Uint8Array());
  }
  const created = await f.api.post(`${v}/providers`, { provider: body }, { token });
  assertEquals(created.status, 200, created.text);
  if (!p.file) return;
  const prepared = await f.api.get(`${v}/provider/${p.name}/${p.architecture}/upload`, { token });
  assertEquals(prepared.status, 200, prepared.text);
  const put = await fetch(prepared.body.upload_path, { method: "PUT", body: p.file });
  assertEquals(put.status, 200, await put.text());
}

export async function addVersion(
  f: Fixture,
  token: string,
  tag: string,
  version: string,
  description: string,
) {
  const a = await f.api.post(`/api/v2/box/${tag}/versions`, { version: { version, description } }, { token });
  assertEquals(a.status, 200, a.text);
}

export async function setStatus(f: Fixture, token: string, tag: string, version: string, step: string) {
  const a = await f.api.put(`/api/v2/box/${tag}/version/${version}/${step}`, undefined, { token });
  assertEquals(a.status, 200, a.text);
}

/**
 * acme on the source: acme/devbox (public, Markdown description) with 1.0.0 (virtualbox amd64 + arm64, arm64 the
 * default), 1.1.0 (virtualbox amd64 without checksum, libvirt external), 1.2.0 unreleased, 0.9.0 revoked, 3
 * downloads; acme/secret (private) with 1.0.0 and 1 download.
 */
export async function sourceOrg(f: Fixture, options: { bigFile?: number } = {}): Promise<SourceOrg> {
  await createUser(f, "alice");
  await createOrg(f, "acme", [{ username: "alice", role: "owner" }]);
  const token = await f.api.login("alice", "alice-password");
  const files = new Map<string, Uint8Array>();
  const box = async (name: string, isPrivate: boolean, short: string, description: string) => {
    const a = await f.api.post("/api/v2/boxes", {
      box: { username: "acme", name, is_private: isPrivate, short_description: short, description },
    }, { token });
    assertEquals(a.status, 200, a.text);
  };
  const hosted = async (tag: string, version: string, p: ProviderSpec) => {
    files.set(`${tag} ${version} ${p.name}/${p.architecture}`, p.file!);
    await addProvider(f, token, tag, version, p);
  };
  await box(
    "devbox",
    false,
    "A development box",
    "# devbox\n\nA box for *development*:\n\n- fast\n- small\n",
  );
  const dev = "acme/devbox";
  await addVersion(f, token, dev, "0.9.0", "The **first** try");
  await hosted(dev, "0.9.0", {
    name: "virtualbox",
    architecture: "amd64",
    file: bytes(3000, 9),
    checksum_type: "sha1",
  });
  await setStatus(f, token, dev, "0.9.0", "release");
  await setStatus(f, token, dev, "0.9.0", "revoke");
  await addVersion(f, token, dev, "1.0.0", "Version *one*");
  await hosted(dev, "1.0.0", {
    name: "virtualbox",
    architecture: "amd64",
    file: bytes(options.bigFile ?? 70_000, 1),
    checksum_type: "sha256",
  });
  await hosted(dev, "1.0.0", {
    name: "virtualbox",
    architecture: "arm64",
    default_architecture: true,
    file: bytes(50_000, 2),
    checksum_type: "md5",
  });
  await setStatus(f, token, dev, "1.0.0", "release");
  await addVersion(f, token, dev, "1.1.0", "Version 1.1\n\n```\nvagrant up\n```");
  await hosted(dev, "1.1.0", { name: "virtualbox", architecture: "amd64", file: bytes(20_000, 3) });
  await addProvider(f, token, dev, "1.1.0", {
    name: "libvirt",
    architecture: "amd64",
    url: "https://files.example.com/devbox-1.1.0-libvirt.box",
  });
  await setStatus(f, token, dev, "1.1.0", "release");
  await addVersion(f, token, dev, "1.2.0", "Not yet");
  await hosted(dev, "1.2.0", {
    name: "virtualbox",
    architecture: "amd64",
    file: bytes(1000, 4),
    checksum_type: "sha512",
  });
  await box("secret", true, "Private", "Only for **acme**");
  await addVersion(f, token, "acme/secret", "1.0.0", "");
  await hosted("acme/secret", "1.0.0", {
    name: "vmware_desktop",
    architecture: "amd64",
    file: bytes(4000, 5),
    checksum_type: "sha384",
  });
  await setStatus(f, token, "acme/secret", "1.0.0", "release");
  // Download counts: three of devbox, one of secret.
  for (const path of ["/acme/devbox", "/acme/devbox", "/acme/devbox", "/acme/secret"]) {
    const [, ns, name] = path.split("/");
    const meta = await f.api.get(`/api/v2/vagrant/${ns}/${name}`, { token });
    const file = await fetch(meta.body.versions[0].providers[0].url, {
      headers: { Authorization: `Bearer ${token}` },
    });
    await file.arrayBuffer();
  }
  return { token, files };
}

/** A box's v2 JSON as its owner sees it, with the URLs (which name the registry's own origin) left out. */
export async function boxView(url: string, token: string | undefined, tag: string, api: 1 | 2 = 2) {
  const a = await new Client(url).get(`/api/v${api}/box/${tag}`, token ? { token } : {});
  if (a.status !== 200) return { status: a.status };
  const strip = (v: unknown): unknown =>
    Array.isArray(v) ? v.map(strip) : v && typeof v === "object"
      ? Object.fromEntries(
        Object.entries(v).filter(([k]) => !["release_url", "revoke_url", "download_url"].includes(k))
          .map(([k, x]) => [k, strip(x)]),
      )
      : v;
  const box = strip(a.body) as Record<string, unknown> & {
    versions: { version: string; providers: { name: string; architecture: string }[] }[];
  };
  // Checksums show only in a single provider's answer.
  for (const v of box.versions) {
    for (const p of v.providers as Record<string, unknown>[]) {
      const path = `/api/v${api}/box/${tag}/version/${v.version}/provider/${p.name}` +
        (api === 2 ? `/${p.architecture}` : "");
      const one = await new Client(url).get(path, token ? { token } : {});
      p.checksum = one.body.checksum;
      p.checksum_type = one.body.checksum_type;
    }
  }
  return box;
}

/** The bytes a target serves for one provider (with a token). */
export async function download(url: string, token: string, tag: string, version: string, provider: string) {
  const [name, arch] = provider.split("/");
  const [ns, box] = tag.split("/");
  const r = await fetch(
    `${url}/${ns}/boxes/${box}/versions/${version}/providers/${name}/${arch}/vagrant.box`,
    {
      headers: { Authorization: `Bearer ${token}` },
    },
  );
  return { status: r.status, bytes: new Uint8Array(await r.arrayBuffer()) };
}

/** Runs the importer in this process; stdout lines and stderr text are captured. */
export async function importer(args: string[], env: Record<string, string> = {}) {
  const out: string[] = [];
  let err = "";
  const code = await runImport(args, {
    stdout: (t) => out.push(t),
    writeStderr: (t) => void (err += t),
    stderrIsTerminal: false,
    env,
  });
  return { code, out: out.join("\n"), err };
}

/** A source wharf with `sourceOrg`'s acme, a target with an empty acme, and the import arguments between them. */
export interface ImportPair {
  src: Fixture;
  dst: Fixture;
  org: SourceOrg;
  /** --from the source, --namespace acme, --server and --token of the target's admin. */
  args: string[];
}

/** A target wharf with an empty acme organization to import into. */
export async function startImportTarget(): Promise<Fixture> {
  const dst = await startRegistry();
  const a = await dst.api.post("/api/v1/admin/organizations", { organization: { name: "acme" } }, {
    token: dst.admin,
  });
  assertEquals(a.status, 200, a.text);
  return dst;
}

/** Runs `fn` with an `ImportPair`, stopping both servers after. */
export async function withImportPair(fn: (pair: ImportPair) => Promise<void>): Promise<void> {
  const src = await startRegistry();
  const dst = await startImportTarget();
  try {
    const org = await sourceOrg(src);
    const args = [
      "--from",
      src.srv.url,
      "--namespace",
      "acme",
      "--server",
      dst.srv.url,
      "--token",
      dst.admin,
    ];
    await fn({ src, dst, org, args });
  } finally {
    await src.stop();
    await dst.stop();
  }
}
