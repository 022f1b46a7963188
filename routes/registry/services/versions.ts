// A box's versions for a caller (docs/registry.md#vagrant-24): find one the caller may see, create, update,
// release, revoke and delete one, with the lifecycle's 422s; and the commit every change under a version goes
// through.

import { ApiError } from "../../../lib/errors.ts";
import type { EventInput, StoredDoc } from "../../../lib/store/mod.ts";
import { type Acting, requireUser } from "../core/caller.ts";
import { notFound, unprocessable } from "../core/errors.ts";
import { versionEvent } from "../core/events.ts";
import { FieldErrors } from "../core/fields.ts";
import { registryLock } from "../core/locks.ts";
import { type BoxDoc, BOXES, now, type VersionDoc } from "../core/model.ts";
import type { Actor } from "../core/registry.ts";
import { hasValidProvider, type View } from "../core/render.ts";
import { compareVersions, isValidVersion, LONG_TEXT_MAX } from "../core/rules.ts";
import { currentWritableBox, ownerView, visibleBox, writableBox } from "./boxes.ts";

const INVALID_VERSION = "Version must be a valid version number (like 1.0.0)";

/** Where a version is: its box's namespace and name, and its number (the exact string). */
export interface VersionPath {
  owner: string;
  box: string;
  version: string;
}

/** A version's fields as a caller sends them, unchecked: every rule on them and its 422 message is here. */
export type VersionInput = { version?: unknown; description?: unknown };

/** A version and the box it belongs to, as committed (a deleted version: as it was). */
export interface VersionRecord {
  box: BoxDoc;
  version: VersionDoc;
}

/** A version the caller may see (unreleased and revoked ones: insiders only), 404 otherwise. */
export function visibleVersion(
  who: Acting,
  at: VersionPath,
): { box: StoredDoc<BoxDoc>; version: VersionDoc; insider: boolean } {
  const { box, insider } = visibleBox(who, at.owner, at.box);
  const version = box.doc.versions.find((v) => v.version === at.version);
  if (!version || (!insider && version.status !== "active")) throw notFound();
  return { box, version, insider };
}

export function findVersion(box: BoxDoc, number: string): VersionDoc {
  const v = box.versions.find((x) => x.version === number);
  if (!v) throw notFound();
  return v;
}

/** Builds a version change's events and result, once the box and the version are stamped updated. */
export type VersionCommitOutcome<R> = (view: View, username: string) => { events: EventInput[]; result: R };

/**
 * Commits `change` to a copy of the version's box and version (and, for providers, what hangs below it):
 * `change` edits the copies and returns how to build the events and the result from them.
 */
export async function commitToVersion<R>(
  who: Actor,
  at: VersionPath,
  change: (box: BoxDoc, version: VersionDoc) => VersionCommitOutcome<R>,
): Promise<R> {
  const user = requireUser(who);
  const target = writableBox(who, at.owner, at.box);
  findVersion(target.doc, at.version);
  // A box belongs to one namespace for good: its owner's key covers every change to it.
  return await who.reg.writeIn([registryLock.namespace(target.doc.owner)], () => {
    const box = currentWritableBox(who, target.id);
    const doc: BoxDoc = structuredClone(box.doc);
    const version = findVersion(doc, at.version);
    const outcome = change(doc, version);
    const t = now();
    version.updated_at = t;
    doc.updated_at = t;
    const { events, result } = outcome(ownerView(who), user.username);
    return { writes: [{ collection: BOXES, id: box.id, doc, ifVersion: box.version }], events, result };
  });
}

/** Commits `change` to a copy of the version; `change` returns the event type to emit. */
function changeVersion(
  who: Actor,
  at: VersionPath,
  change: (box: BoxDoc, version: VersionDoc) => Parameters<typeof versionEvent>[0] | null,
): Promise<VersionRecord> {
  return commitToVersion(who, at, (doc, version) => {
    const type = change(doc, version);
    return (view, username) => {
      if (type === "VersionDeleted") doc.versions = doc.versions.filter((v) => v !== version);
      return {
        events: type ? [versionEvent(type, view, doc, version, username)] : [],
        result: { box: doc, version },
      };
    };
  });
}

/** A new unreleased version of the box `owner/name`. */
export async function createVersion(
  who: Actor,
  owner: string,
  name: string,
  input: VersionInput,
): Promise<VersionRecord> {
  const user = requireUser(who);
  const target = writableBox(who, owner, name);
  const errors = new FieldErrors();
  const number = errors.required(input, "version", "Version", 64);
  if (number !== undefined && !isValidVersion(number)) errors.add(INVALID_VERSION);
  const description = errors.text(input, "description", "Description", LONG_TEXT_MAX);
  errors.throwIfAny();
  const reg = who.reg;
  return await reg.writeIn([registryLock.namespace(target.doc.owner)], () => {
    const box = currentWritableBox(who, target.id);
    if (box.doc.versions.some((v) => compareVersions(v.version, number!) === 0)) {
      throw unprocessable(["Version has already been taken"]);
    }
    const t = now();
    const version: VersionDoc = {
      version: number!,
      status: "unreleased",
      description: description ?? null,
      providers: [],
      created_at: t,
      updated_at: t,
    };
    const doc: BoxDoc = { ...box.doc, versions: [...box.doc.versions, version], updated_at: t };
    return {
      writes: [{ collection: BOXES, id: box.id, doc, ifVersion: box.version }],
      events: [versionEvent("VersionCreated", ownerView(who), doc, version, user.username)],
      result: { box: doc, version },
    };
  });
}

/** Changes the version's description, or its number while unreleased. */
export function updateVersion(who: Actor, at: VersionPath, input: VersionInput): Promise<VersionRecord> {
  requireUser(who);
  writableBox(who, at.owner, at.box);
  const errors = new FieldErrors();
  const number = errors.text(input, "version", "Version", 64);
  if (number === null) errors.add("Version can't be blank");
  if (typeof number === "string" && !isValidVersion(number)) errors.add(INVALID_VERSION);
  const description = errors.text(input, "description", "Description", LONG_TEXT_MAX);
  errors.throwIfAny();
  return changeVersion(who, at, (box, version) => {
    const renaming = typeof number === "string" && number !== version.version;
    if (renaming && version.status === "revoked") {
      throw new ApiError(422, `Version ${version.version} is revoked`);
    }
    if (renaming && version.status !== "unreleased") {
      throw new ApiError(422, "Version number can only be changed while unreleased");
    }
    if (renaming && box.versions.some((v) => v !== version && compareVersions(v.version, number!) === 0)) {
      throw unprocessable(["Version has already been taken"]);
    }
    if (renaming) version.version = number!;
    if (description !== undefined) version.description = description;
    return "VersionUpdated";
  });
}

/** Unreleased → active, when the version has a valid provider. */
export function releaseVersion(who: Actor, at: VersionPath): Promise<VersionRecord> {
  return changeVersion(who, at, (_box, version) => {
    const v = version.version;
    if (version.status === "active") throw new ApiError(422, `Version ${v} is already released`);
    if (version.status === "revoked") {
      throw new ApiError(422, `Version ${v} is revoked and cannot be released again`);
    }
    if (!hasValidProvider(version)) throw new ApiError(422, `Version ${v} has no valid provider`);
    version.status = "active";
    return "VersionReleased";
  });
}

/** Active → revoked, for good. */
export function revokeVersion(who: Actor, at: VersionPath): Promise<VersionRecord> {
  return changeVersion(who, at, (_box, version) => {
    if (version.status !== "active") {
      throw new ApiError(422, `Version ${version.version} is not active and cannot be revoked`);
    }
    version.status = "revoked";
    return "VersionRevoked";
  });
}

/** Deletes the version and its providers; the record is the version as it was. */
export function deleteVersion(who: Actor, at: VersionPath): Promise<VersionRecord> {
  return changeVersion(who, at, () => "VersionDeleted");
}
