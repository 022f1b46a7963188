// Providers for a caller (docs/registry.md#vagrant-24): create, update (rename, architecture, default flag,
// url, checksum) and delete. A v1 caller addresses each name's default architecture, a v2 caller (name,
// architecture).

import { createHash } from "node:crypto";
import { ApiError } from "../../../lib/errors.ts";
import { canonicalHttpUrl, hasControlOrSpace } from "../../../lib/urls.ts";
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
import { requireUser } from "../core/caller.ts";
import { notFound, unprocessable } from "../core/errors.ts";
import { providerEvent } from "../core/events.ts";
import { FieldErrors } from "../core/fields.ts";
import { type BoxDoc, now, type ProviderDoc, providerIsValid, type VersionDoc } from "../core/model.ts";
import type { Actor } from "../core/registry.ts";
import { checksumLengths, providerNamePattern } from "../core/rules.ts";
import type { RegistryState } from "../core/state.ts";
import { writableBox } from "./boxes.ts";
import { commitToVersion, findVersion, type VersionPath } from "./versions.ts";

/** Where a provider is: its version, and its name and architecture (v1 callers: the name's default). */
export interface ProviderPath extends VersionPath {
  provider: string;
  architecture: string;
}

/** A provider's fields as a caller sends them, unchecked: every rule on them and its 422 message is here. */
export type ProviderInput = {
  name?: unknown;
  url?: unknown;
  checksum_type?: unknown;
  checksum?: unknown;
  architecture?: unknown;
  default_architecture?: unknown;
};

/** A provider, the version and box it belongs to, as committed (a deleted provider: as it was). */
export interface ProviderRecord {
  box: BoxDoc;
  version: VersionDoc;
  provider: ProviderDoc;
}

/** The provider a path names: for a v1 caller its name's default architecture, for v2 (name, architecture). */
export function pathProviderOrNone(
  who: { api: 1 | 2 },
  at: ProviderPath,
  version: VersionDoc,
): ProviderDoc | undefined {
  return who.api === 2
    ? providerIn(version, at.provider, at.architecture)
    : defaultProvider(version, at.provider);
}

export function pathProvider(who: { api: 1 | 2 }, at: ProviderPath, version: VersionDoc): ProviderDoc {
  const p = pathProviderOrNone(who, at, version);
  if (!p) throw notFound();
  return p;
}

/** The provider `at` names, for a writer of its box (401/403/404 otherwise): the writer and the records. */
export function writableProvider(who: Actor, at: ProviderPath) {
  const user = requireUser(who);
  const box = writableBox(who, at.owner, at.box);
  const version = findVersion(box.doc, at.version);
  return { user, box, version, provider: pathProvider(who, at, version) };
}

interface ProviderFields {
  name: string | null | undefined;
  url: string | null | undefined;
  /** undefined = unchanged, null = clear, else the new pair. */
  checksum: { type: string; hex: string } | null | undefined;
  /**
   * One half sent as "" and the other left out (or null, i.e. unchanged): it clears a half that is already
   * empty, so it is accepted only when the provider has no checksum (the pair stays "both or neither").
   */
  halfClear: boolean;
  /** v2 only: undefined = unchanged (create: unknown). */
  architecture: string | undefined;
  /** v2 only: true takes the default flag, false passes it on, undefined/null leaves it. */
  defaultArchitecture: boolean | null | undefined;
}

const TOGETHER = "Checksum and checksum type must be given together";

function readProviderFields(body: ProviderInput, creating: boolean, api: 1 | 2): ProviderFields {
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
  who: Actor,
  at: VersionPath,
  change: (
    box: BoxDoc,
    version: VersionDoc,
  ) => { provider: ProviderDoc; type: Parameters<typeof providerEvent>[0] },
): Promise<ProviderRecord> {
  return commitToVersion(who, at, (doc, version) => {
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
      result: { box: doc, version, provider },
    });
  });
}

/** 422 when the provider's identity is taken: v1 by the name in any architecture, v2 by the pair. */
function assertFree(who: Actor, version: VersionDoc, name: string, architecture: string, self?: ProviderDoc) {
  const taken = version.providers.some((p) =>
    p !== self && p.name === name && (who.api === 1 || p.architecture === architecture)
  );
  if (taken) throw unprocessable([who.api === 2 ? DUPLICATE_PAIR : DUPLICATE_NAME]);
}

/** A new provider of the version (no file yet: an upload or a url gives it one). */
export function createProvider(who: Actor, at: VersionPath, input: ProviderInput): Promise<ProviderRecord> {
  requireUser(who);
  writableBox(who, at.owner, at.box);
  const fields = readProviderFields(input, true, who.api);
  return commitProvider(who, at, (_box, version) => {
    assertWritableVersion(version);
    const architecture = fields.architecture ?? UNKNOWN;
    assertFree(who, version, fields.name!, architecture);
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

/** Renames, moves, flags or repoints the provider, or sets its checksum (checked against a hosted file). */
export async function updateProvider(
  who: Actor,
  at: ProviderPath,
  input: ProviderInput,
): Promise<ProviderRecord> {
  const body = input;
  requireUser(who);
  writableBox(who, at.owner, at.box);
  const fields = readProviderFields(body, false, who.api);
  const computed = await digestsForChecksum(who, at, fields);
  return await commitProvider(who, at, (_box, version) => {
    assertWritableVersion(version);
    const provider = pathProvider(who, at, version);
    const name = fields.name || provider.name;
    const architecture = fields.architecture ?? provider.architecture;
    if (name !== provider.name || architecture !== provider.architecture) {
      assertFree(who, version, name, architecture, provider);
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
async function digestsForChecksum(
  who: Actor,
  at: ProviderPath,
  fields: ProviderFields,
): Promise<Map<string, string>> {
  const out = new Map<string, string>();
  if (!fields.checksum) return out;
  const box = who.reg.box(at.owner, at.box)?.doc;
  const version = box?.versions.find((v) => v.version === at.version);
  const blob = version && pathProviderOrNone(who, at, version)?.blob;
  if (!blob || blob.digests[fields.checksum.type]) return out;
  out.set(
    `${blob.sha256}/${fields.checksum.type}`,
    await hashBlob(who.reg, blob.sha256, fields.checksum.type),
  );
  return out;
}

/** Reads a stored file to compute a digest that was not computed at upload. */
export async function hashBlob(reg: RegistryState, sha256: string, algorithm: string): Promise<string> {
  const response = await reg.ctx.data.blobs.respond(sha256, new Request("http://wharf/"));
  const hash = createHash(algorithm);
  for await (const chunk of response.body!) hash.update(chunk);
  return hash.digest("hex");
}

/** Deletes the provider (its file goes when nothing else holds it); the record is the provider as it was. */
export function deleteProvider(who: Actor, at: ProviderPath): Promise<ProviderRecord> {
  return commitProvider(who, at, (_box, version) => {
    const provider = pathProvider(who, at, version);
    version.providers = version.providers.filter((p) => p !== provider);
    settleDefaults(version);
    if (version.status === "active" && !version.providers.some(providerIsValid)) {
      throw new ApiError(422, `Version ${version.version} would have no valid provider; revoke it first`);
    }
    return { provider, type: "ProviderDeleted" };
  });
}
