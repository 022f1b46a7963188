// Versions (§6.3, §7): read, create, update, delete, release and revoke, with the lifecycle's 422s.

import { ApiError } from "../../../lib/errors.ts";
import { json } from "../../../lib/http.ts";
import type { EventInput, StoredDoc } from "../../../lib/store/mod.ts";
import { type Req } from "./auth.ts";
import { requireUser } from "../core/caller.ts";
import { readPayload } from "./body.ts";
import { FieldErrors } from "../core/fields.ts";
import { notFound, unprocessable } from "../core/errors.ts";
import { versionEvent } from "../core/events.ts";
import { type BoxDoc, BOXES, now, type VersionDoc } from "../core/model.ts";
import { hasValidProvider, renderVersion, type View } from "../core/render.ts";
import { compareVersions, isValidVersion, LONG_TEXT_MAX } from "../core/rules.ts";
import { ownerView, visibleBox, writableBox } from "./boxes.ts";
import { currentWritableBox } from "../services/boxes.ts";
import { registryLock } from "../core/locks.ts";

const INVALID_VERSION = "Version must be a valid version number (like 1.0.0)";

/** The version named by the path (exact string), visible to the caller. */
export function visibleVersion(req: Req): { box: StoredDoc<BoxDoc>; version: VersionDoc; insider: boolean } {
  const { box, insider } = visibleBox(req);
  const version = box.doc.versions.find((v) => v.version === req.ctx.params.version);
  if (!version || (!insider && version.status !== "active")) throw notFound();
  return { box, version, insider };
}

export function findVersion(box: BoxDoc, number: string): VersionDoc {
  const v = box.versions.find((x) => x.version === number);
  if (!v) throw notFound();
  return v;
}

/** Builds a version change's events and answer, once the box and the version are stamped updated. */
export type VersionCommitOutcome = (
  view: View,
  username: string,
) => { events: EventInput[]; result: unknown };

/**
 * Commits `change` to a copy of the path's box and version (and, for providers, what hangs below it): `change`
 * edits the copies and returns how to build the events and the answer from them.
 */
export async function commitToVersion(
  req: Req,
  change: (box: BoxDoc, version: VersionDoc) => VersionCommitOutcome,
): Promise<Response> {
  const user = requireUser(req);
  const target = writableBox(req);
  findVersion(target.doc, req.ctx.params.version ?? "");
  // A box belongs to one namespace for good: its owner's key covers every change to it.
  const result = await req.reg.writeIn([registryLock.namespace(target.doc.owner)], () => {
    const box = currentWritableBox(req, target.id);
    const doc: BoxDoc = structuredClone(box.doc);
    const version = findVersion(doc, req.ctx.params.version ?? "");
    const outcome = change(doc, version);
    const t = now();
    version.updated_at = t;
    doc.updated_at = t;
    const { events, result } = outcome(ownerView(req), user.username);
    return { writes: [{ collection: BOXES, id: box.id, doc, ifVersion: box.version }], events, result };
  });
  return json(result);
}

/** Commits `change` to a copy of the path's version; `change` returns the event type to emit. */
export function changeVersion(
  req: Req,
  change: (box: BoxDoc, version: VersionDoc) => Parameters<typeof versionEvent>[0] | null,
): Promise<Response> {
  return commitToVersion(req, (doc, version) => {
    const type = change(doc, version);
    return (view, username) => {
      if (type === "VersionDeleted") doc.versions = doc.versions.filter((v) => v !== version);
      return {
        events: type ? [versionEvent(type, view, doc, version, username)] : [],
        result: renderVersion(view, doc, version),
      };
    };
  });
}

export function getVersion(req: Req): Response {
  const { box, version, insider } = visibleVersion(req);
  return json(renderVersion({ reg: req.reg, origin: req.origin, insider, api: req.api }, box.doc, version));
}

export async function createVersion(req: Req): Promise<Response> {
  const body = await readPayload(req, "version");
  const user = requireUser(req);
  const target = writableBox(req);
  const errors = new FieldErrors();
  const number = errors.required(body, "version", "Version", 64);
  if (number !== undefined && !isValidVersion(number)) errors.add(INVALID_VERSION);
  const description = errors.text(body, "description", "Description", LONG_TEXT_MAX);
  errors.throwIfAny();
  const reg = req.reg;
  const result = await reg.writeIn([registryLock.namespace(target.doc.owner)], () => {
    const box = currentWritableBox(req, target.id);
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
    const view = ownerView(req);
    return {
      writes: [{ collection: BOXES, id: box.id, doc, ifVersion: box.version }],
      events: [versionEvent("VersionCreated", view, doc, version, user.username)],
      result: renderVersion(view, doc, version),
    };
  });
  return json(result);
}

export async function updateVersion(req: Req): Promise<Response> {
  const body = await readPayload(req, "version");
  requireUser(req);
  writableBox(req);
  const errors = new FieldErrors();
  const number = errors.text(body, "version", "Version", 64);
  if (number === null) errors.add("Version can't be blank");
  if (typeof number === "string" && !isValidVersion(number)) errors.add(INVALID_VERSION);
  const description = errors.text(body, "description", "Description", LONG_TEXT_MAX);
  errors.throwIfAny();
  return await changeVersion(req, (box, version) => {
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

export function releaseVersion(req: Req): Promise<Response> {
  return changeVersion(req, (_box, version) => {
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

export function revokeVersion(req: Req): Promise<Response> {
  return changeVersion(req, (_box, version) => {
    if (version.status !== "active") {
      throw new ApiError(422, `Version ${version.version} is not active and cannot be revoked`);
    }
    version.status = "revoked";
    return "VersionRevoked";
  });
}

export function deleteVersion(req: Req): Promise<Response> {
  return changeVersion(req, () => "VersionDeleted");
}
