// Providers (§8): read (with checksum), create, update (rename, url, checksum), delete.

import { createHash } from "node:crypto";
import { ApiError } from "../../lib/errors.ts";
import { json } from "../../lib/http.ts";
import { type Req, requireUser } from "./auth.ts";
import { FieldErrors, type Payload, readPayload } from "./body.ts";
import { notFound, unprocessable } from "./errors.ts";
import { providerEvent } from "./events.ts";
import { type BoxDoc, now, type ProviderDoc, providerIsValid, type VersionDoc } from "./model.ts";
import { renderProvider } from "./render.ts";
import { checksumLengths, providerNamePattern } from "./rules.ts";
import { writableBox } from "./boxes.ts";
import { commitToVersion, visibleVersion } from "./versions.ts";

const DUPLICATE = "Metadata provider must be unique for version";

export function findProvider(version: VersionDoc, name: string): ProviderDoc {
  const p = version.providers.find((x) => x.name === name);
  if (!p) throw notFound();
  return p;
}

export function getProvider(req: Req): Response {
  const { box, version, insider } = visibleVersion(req);
  const provider = findProvider(version, req.ctx.params.provider ?? "");
  return json(
    renderProvider({ reg: req.reg, origin: req.origin, insider }, box.doc, version, provider, true),
  );
}

interface ProviderFields {
  name: string | null | undefined;
  url: string | null | undefined;
  /** undefined = unchanged, null = clear, else the new pair. */
  checksum: { type: string; hex: string } | null | undefined;
  /**
   * One half sent as "" and the other left out (or null, i.e. unchanged, D3): it clears a half that is already
   * empty, so it is accepted only when the provider has no checksum (the pair stays "both or neither").
   */
  halfClear: boolean;
}

const TOGETHER = "Checksum and checksum type must be given together";

function readProviderFields(body: Payload, creating: boolean): ProviderFields {
  const errors = new FieldErrors();
  const name = creating ? errors.required(body, "name", "Name", 64) : errors.text(body, "name", "Name", 64);
  if (name === null) errors.add("Name can't be blank");
  if (typeof name === "string" && !providerNamePattern.test(name)) {
    errors.add("Name must be lowercase letters, digits, '_' or '-' (like virtualbox), at most 64");
  }
  const url = errors.text(body, "url", "Url", 2048);
  if (typeof url === "string" && url !== "" && !isHttpUrl(url)) {
    errors.add("Url must be an absolute http or https URL");
  }
  const type = errors.text(body, "checksum_type", "Checksum type", 16);
  const hex = errors.text(body, "checksum", "Checksum", 256);
  let checksum: ProviderFields["checksum"];
  const typeGiven = typeof type === "string" && type !== "";
  const hexGiven = typeof hex === "string" && hex !== "";
  const unchanged = (v: string | null | undefined) => v === undefined || v === null;
  const halfClear = (type === "" && unchanged(hex)) || (hex === "" && unchanged(type));
  // A half clear is decided against the stored pair (updateProvider); on create there is none.
  if (!halfClear && (type === "") !== (hex === "") && (type === "" || hex === "")) {
    errors.add(TOGETHER);
  } else if (type === "" && hex === "") checksum = null;
  else if (typeGiven || hexGiven) {
    const t = typeGiven ? type!.toLowerCase() : undefined;
    if (typeGiven && !(t! in checksumLengths)) {
      errors.add("Checksum type must be one of md5, sha1, sha256, sha384, sha512");
    }
    if (!typeGiven) errors.add("Checksum type can't be blank when a checksum is given");
    if (!hexGiven) errors.add("Checksum can't be blank when a checksum type is given");
    if (
      hexGiven && t && t in checksumLengths && !new RegExp(`^[0-9a-fA-F]{${checksumLengths[t]}}$`).test(hex!)
    ) {
      errors.add(`Checksum must be ${checksumLengths[t]} hexadecimal characters for ${t}`);
    }
    if (typeGiven && hexGiven) checksum = { type: t!, hex: hex!.toLowerCase() };
  }
  errors.throwIfAny();
  return { name, url: url === "" ? null : url, checksum, halfClear };
}

function isHttpUrl(s: string): boolean {
  try {
    const u = new URL(s);
    return (u.protocol === "http:" || u.protocol === "https:") && u.host !== "";
  } catch {
    return false;
  }
}

function assertWritableVersion(version: VersionDoc): void {
  if (version.status === "revoked") throw new ApiError(422, `Version ${version.version} is revoked`);
}

/** A checksum set on a hosted provider must describe the stored file. */
function assertMatchesFile(p: ProviderDoc, computed: Map<string, string>): void {
  if (!p.blob || !p.checksum || !p.checksum_type) return;
  const actual = p.blob.digests[p.checksum_type] ?? computed.get(`${p.blob.sha256}/${p.checksum_type}`);
  if (actual !== undefined && !p.blob.digests[p.checksum_type]) {
    p.blob = { ...p.blob, digests: { ...p.blob.digests, [p.checksum_type]: actual } };
  }
  if (actual !== undefined && actual !== p.checksum) {
    throw unprocessable([`Checksum mismatch: expected ${p.checksum_type} ${p.checksum}, got ${actual}`]);
  }
}

/** Runs `change` on a copy of the path's provider (or version, for create) inside one commit. */
function commitProvider(
  req: Req,
  change: (
    box: BoxDoc,
    version: VersionDoc,
  ) => { provider: ProviderDoc; type: Parameters<typeof providerEvent>[0] },
): Promise<Response> {
  return commitToVersion(req, (doc, version) => {
    const { provider, type } = change(doc, version);
    return (view, username) => ({
      events: [providerEvent(type, view, doc, version, provider, username)],
      result: renderProvider(view, doc, version, provider),
    });
  });
}

export async function createProvider(req: Req): Promise<Response> {
  const body = await readPayload(req, "provider");
  requireUser(req);
  writableBox(req);
  const fields = readProviderFields(body, true);
  return await commitProvider(req, (_box, version) => {
    assertWritableVersion(version);
    if (version.providers.some((p) => p.name === fields.name)) throw unprocessable([DUPLICATE]);
    const t = now();
    const provider: ProviderDoc = {
      name: fields.name!,
      url: fields.url ?? null,
      checksum: fields.checksum?.hex ?? null,
      checksum_type: fields.checksum?.type ?? null,
      blob: null,
      architecture: "unknown",
      default_architecture: true,
      created_at: t,
      updated_at: t,
    };
    version.providers.push(provider);
    return { provider, type: "ProviderCreated" };
  });
}

export async function updateProvider(req: Req): Promise<Response> {
  const body = await readPayload(req, "provider");
  requireUser(req);
  writableBox(req);
  const fields = readProviderFields(body, false);
  const computed = await digestsForChecksum(req, fields);
  return await commitProvider(req, (_box, version) => {
    assertWritableVersion(version);
    const provider = findProvider(version, req.ctx.params.provider ?? "");
    if (fields.name && fields.name !== provider.name) {
      if (version.providers.some((p) => p.name === fields.name)) throw unprocessable([DUPLICATE]);
      provider.name = fields.name;
    }
    if (typeof fields.url === "string") {
      provider.url = fields.url;
      provider.blob = null;
    } else if (body.url === "") {
      provider.url = null;
    }
    if (fields.halfClear && (provider.checksum !== null || provider.checksum_type !== null)) {
      throw unprocessable([TOGETHER]);
    }
    if (fields.checksum === null) {
      provider.checksum = null;
      provider.checksum_type = null;
    } else if (fields.checksum) {
      provider.checksum = fields.checksum.hex;
      provider.checksum_type = fields.checksum.type;
    }
    assertMatchesFile(provider, computed);
    if (version.status === "active" && !version.providers.some(providerIsValid)) {
      throw new ApiError(422, `Version ${version.version} would have no valid provider; revoke it first`);
    }
    provider.updated_at = now();
    return { provider, type: "ProviderUpdated" };
  });
}

/** Hashes the hosted file with a checksum type not computed at upload (rare: a checksum set afterwards). */
async function digestsForChecksum(req: Req, fields: ProviderFields): Promise<Map<string, string>> {
  const out = new Map<string, string>();
  if (!fields.checksum) return out;
  const box = req.reg.box(req.ctx.params.username ?? "", req.ctx.params.name ?? "")?.doc;
  const blob = box?.versions.find((v) => v.version === req.ctx.params.version)?.providers
    .find((p) => p.name === req.ctx.params.provider)?.blob;
  if (!blob || blob.digests[fields.checksum.type]) return out;
  out.set(`${blob.sha256}/${fields.checksum.type}`, await hashBlob(req, blob.sha256, fields.checksum.type));
  return out;
}

/** Reads a stored file to compute a digest that was not computed at upload. */
export async function hashBlob(req: Req, sha256: string, algorithm: string): Promise<string> {
  const response = await req.reg.ctx.data.blobs.respond(sha256, new Request("http://wharf/"));
  const hash = createHash(algorithm);
  for await (const chunk of response.body!) hash.update(chunk);
  return hash.digest("hex");
}

export function deleteProvider(req: Req): Promise<Response> {
  return commitProvider(req, (_box, version) => {
    const provider = findProvider(version, req.ctx.params.provider ?? "");
    version.providers = version.providers.filter((p) => p !== provider);
    if (version.status === "active" && !version.providers.some(providerIsValid)) {
      throw new ApiError(422, `Version ${version.version} would have no valid provider; revoke it first`);
    }
    return { provider, type: "ProviderDeleted" };
  });
}
