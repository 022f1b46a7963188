// Providers (§8, v2 §1): read (with checksum), create, update (rename, architecture, default flag, url,
// checksum), delete. v1 paths address each name's default architecture, v2 paths (name, architecture).

import { createHash } from "node:crypto";
import { ApiError } from "../../../lib/errors.ts";
import { json } from "../../../lib/http.ts";
import { canonicalHttpUrl, hasControlOrSpace } from "../../../lib/urls.ts";
import { type Req } from "./auth.ts";
import { requireUser } from "../core/caller.ts";
import { readPayload } from "./body.ts";
import { FieldErrors, type Payload } from "../core/fields.ts";
import { notFound, unprocessable } from "../core/errors.ts";
import { providerEvent } from "../core/events.ts";
import { type BoxDoc, now, type ProviderDoc, providerIsValid, type VersionDoc } from "../core/model.ts";
import { renderProvider } from "../core/render.ts";
import { checksumLengths, providerNamePattern } from "../core/rules.ts";
import { writableBox } from "./boxes.ts";
import { commitToVersion, visibleVersion } from "./versions.ts";
import {
  defaultFlags,
  defaultProvider,
  DUPLICATE_NAME,
  DUPLICATE_PAIR,
  INVALID_ARCHITECTURE,
  isArchitecture,
  movedDefaults,
  providerIn,
  settleDefaults,
  UNKNOWN,
} from "../core/architectures.ts";

/** The provider a path names: v1 `…/provider/:provider` its default architecture, v2 `…/:provider/:architecture`. */
export function pathProviderOrNone(req: Req, version: VersionDoc): ProviderDoc | undefined {
  const name = req.ctx.params.provider ?? "";
  return req.api === 2
    ? providerIn(version, name, req.ctx.params.architecture ?? "")
    : defaultProvider(version, name);
}

export function pathProvider(req: Req, version: VersionDoc): ProviderDoc {
  const p = pathProviderOrNone(req, version);
  if (!p) throw notFound();
  return p;
}

export function getProvider(req: Req): Response {
  const { box, version, insider } = visibleVersion(req);
  const provider = pathProvider(req, version);
  return json(
    renderProvider(
      { reg: req.reg, origin: req.origin, insider, api: req.api },
      box.doc,
      version,
      provider,
      true,
    ),
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
  /** v2 only: undefined = unchanged (create: unknown). */
  architecture: string | undefined;
  /** v2 only: true takes the default flag, false passes it on, undefined/null leaves it. */
  defaultArchitecture: boolean | null | undefined;
}

const TOGETHER = "Checksum and checksum type must be given together";

function readProviderFields(body: Payload, creating: boolean, api: 1 | 2): ProviderFields {
  const errors = new FieldErrors();
  const name = creating ? errors.required(body, "name", "Name", 64) : errors.text(body, "name", "Name", 64);
  if (name === null) errors.add("Name can't be blank");
  if (typeof name === "string" && !providerNamePattern.test(name)) {
    errors.add("Name must be lowercase letters, digits, '_' or '-' (like virtualbox), at most 64");
  }
  const given = errors.text(body, "url", "Url", 2048);
  // Stored canonical: the download answers it as a Location header (docs/security.md, "Response headers").
  let url = given;
  if (typeof given === "string" && given !== "") {
    url = canonicalHttpUrl(given);
    if (url === undefined && hasControlOrSpace(given)) {
      errors.add("Url must not contain control characters or spaces");
    } else if (url === undefined) errors.add("Url must be an absolute http or https URL");
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
  let architecture: string | undefined;
  let defaultArchitecture: boolean | null | undefined;
  if (api === 2) {
    const arch = body.architecture;
    if (typeof arch === "string" && isArchitecture(arch)) architecture = arch;
    else if (arch !== undefined && arch !== null) errors.add(INVALID_ARCHITECTURE);
    defaultArchitecture = errors.bool(body, "default_architecture", "Default architecture");
  }
  errors.throwIfAny();
  return { name, url: url === "" ? null : url, checksum, halfClear, architecture, defaultArchitecture };
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

/**
 * Runs `change` on a copy of the path's provider (or version, for create) inside one commit. Other providers
 * whose default flag the change moved are stamped updated and get their own ProviderUpdated event.
 */
function commitProvider(
  req: Req,
  change: (
    box: BoxDoc,
    version: VersionDoc,
  ) => { provider: ProviderDoc; type: Parameters<typeof providerEvent>[0] },
): Promise<Response> {
  return commitToVersion(req, (doc, version) => {
    const before = defaultFlags(version);
    const { provider, type } = change(doc, version);
    const moved = movedDefaults(version, before, provider);
    const t = now();
    for (const p of moved) p.updated_at = t;
    return (view, username) => ({
      events: [
        providerEvent(type, view, doc, version, provider, username),
        ...moved.map((p) => providerEvent("ProviderUpdated", view, doc, version, p, username)),
      ],
      result: renderProvider(view, doc, version, provider),
    });
  });
}

/** 422 when the provider's identity is taken: v1 by the name in any architecture, v2 by the pair. */
function assertFree(req: Req, version: VersionDoc, name: string, architecture: string, self?: ProviderDoc) {
  const taken = version.providers.some((p) =>
    p !== self && p.name === name && (req.api === 1 || p.architecture === architecture)
  );
  if (taken) throw unprocessable([req.api === 2 ? DUPLICATE_PAIR : DUPLICATE_NAME]);
}

export async function createProvider(req: Req): Promise<Response> {
  const body = await readPayload(req, "provider");
  requireUser(req);
  writableBox(req);
  const fields = readProviderFields(body, true, req.api);
  return await commitProvider(req, (_box, version) => {
    assertWritableVersion(version);
    const architecture = fields.architecture ?? UNKNOWN;
    assertFree(req, version, fields.name!, architecture);
    const t = now();
    const provider: ProviderDoc = {
      name: fields.name!,
      url: fields.url ?? null,
      checksum: fields.checksum?.hex ?? null,
      checksum_type: fields.checksum?.type ?? null,
      blob: null,
      architecture,
      default_architecture: fields.defaultArchitecture === true,
      created_at: t,
      updated_at: t,
    };
    version.providers.push(provider);
    // The first of its name gets the flag whatever was asked (there must be one); `true` takes it over.
    settleDefaults(version, fields.defaultArchitecture === true ? { prefer: provider } : {});
    return { provider, type: "ProviderCreated" };
  });
}

export async function updateProvider(req: Req): Promise<Response> {
  const body = await readPayload(req, "provider");
  requireUser(req);
  writableBox(req);
  const fields = readProviderFields(body, false, req.api);
  const computed = await digestsForChecksum(req, fields);
  return await commitProvider(req, (_box, version) => {
    assertWritableVersion(version);
    const provider = pathProvider(req, version);
    const name = fields.name || provider.name;
    const architecture = fields.architecture ?? provider.architecture;
    if (name !== provider.name || architecture !== provider.architecture) {
      assertFree(req, version, name, architecture, provider);
      // A rename into a name that already has a default arrives without the flag.
      if (name !== provider.name && defaultProvider(version, name)) provider.default_architecture = false;
      provider.name = name;
      provider.architecture = architecture;
    }
    // The name it left passes its flag on; `true` takes the flag, `false` passes it to the oldest other one.
    settleDefaults(version, {
      prefer: fields.defaultArchitecture === true ? provider : undefined,
      avoid: fields.defaultArchitecture === false ? provider : undefined,
    });
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
  const version = box?.versions.find((v) => v.version === req.ctx.params.version);
  const blob = version && pathProviderOrNone(req, version)?.blob;
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
    const provider = pathProvider(req, version);
    version.providers = version.providers.filter((p) => p !== provider);
    settleDefaults(version);
    if (version.status === "active" && !version.providers.some(providerIsValid)) {
      throw new ApiError(422, `Version ${version.version} would have no valid provider; revoke it first`);
    }
    return { provider, type: "ProviderDeleted" };
  });
}
