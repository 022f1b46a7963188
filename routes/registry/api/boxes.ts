// Boxes (§6.3): GET/PUT/DELETE /api/v1/box/:username/:name and POST /api/v1/boxes.

import { json } from "../../../lib/http.ts";
import type { StoredDoc } from "../../../lib/store/mod.ts";
import { ulid } from "../../../lib/ids.ts";
import type { Req } from "./auth.ts";
import { requireUser, requireWrite } from "../core/caller.ts";
import { readPayload } from "./body.ts";
import { FieldErrors, type Payload } from "../core/fields.ts";
import { notFound, unprocessable } from "../core/errors.ts";
import { boxEvent } from "../core/events.ts";
import { type BoxDoc, BOXES, now } from "../core/model.ts";
import { boxJson, boxPath, renderBox, type View } from "../core/render.ts";
import { jsonText } from "./respond.ts";
import { isValidBoxName, LONG_TEXT_MAX, SHORT_DESCRIPTION_MAX } from "../core/rules.ts";
import { registryLock } from "../core/locks.ts";
import * as boxes from "../services/boxes.ts";
import { currentBox, currentWritableBox, type VisibleBox } from "../services/boxes.ts";

/** The box named by the path, visible to the caller (404 otherwise), and whether the caller is an insider. */
export function visibleBox(req: Req): VisibleBox {
  return boxes.visibleBox(req, req.ctx.params.username ?? "", req.ctx.params.name ?? "");
}

/** The box named by the path, for a write: visible, writable, solvent. */
export function writableBox(req: Req): StoredDoc<BoxDoc> {
  return boxes.writableBox(req, req.ctx.params.username ?? "", req.ctx.params.name ?? "");
}

export function ownerView(req: Req): View {
  return { reg: req.reg, origin: req.origin, insider: true, api: req.api };
}

function readPrivacy(errors: FieldErrors, body: Payload): boolean {
  const key = "is_private" in body && body.is_private !== null ? "is_private" : "private";
  const v = errors.bool(body, key, "Is private");
  return v === undefined || v === null ? true : v;
}

function readTexts(errors: FieldErrors, body: Payload) {
  return {
    short: errors.text(body, "short_description", "Short description", SHORT_DESCRIPTION_MAX),
    long: errors.text(body, "description", "Description", LONG_TEXT_MAX),
  };
}

function checkName(errors: FieldErrors, name: string | undefined): void {
  if (name !== undefined && !isValidBoxName(name)) {
    errors.add(
      "Name must start with a letter or digit and use only letters, digits, '.', '_' and '-' (at most 100)",
    );
  }
}

export function getBox(req: Req): Response {
  const { box, insider } = visibleBox(req);
  return jsonText(boxJson({ reg: req.reg, origin: req.origin, insider, api: req.api }, box));
}

export async function createBox(req: Req): Promise<Response> {
  const body = await readPayload(req, "box");
  const user = requireUser(req);
  const errors = new FieldErrors();
  const username = errors.text(body, "username", "Username", 64) ?? user.username;
  const ownerKey = username.toLowerCase();
  if (req.reg.namespaceName(ownerKey) === undefined) throw notFound();
  requireWrite(req, ownerKey);
  const name = errors.required(body, "name", "Name", 100);
  checkName(errors, name);
  const texts = readTexts(errors, body);
  const isPrivate = readPrivacy(errors, body);
  errors.throwIfAny();
  const reg = req.reg;
  // Box names are unique per namespace: creates and renames in it take its key.
  const stored = await reg.writeIn([registryLock.namespace(ownerKey)], () => {
    if (reg.namespaceName(ownerKey) === undefined) throw notFound();
    requireWrite(req, ownerKey);
    if (reg.box(ownerKey, name!)) throw unprocessable(["Name has already been taken"]);
    const t = now();
    const doc: BoxDoc = {
      owner: ownerKey,
      name: name!,
      short_description: texts.short ?? null,
      description: texts.long ?? null,
      private: isPrivate,
      versions: [],
      created_at: t,
      updated_at: t,
    };
    const id = ulid();
    const pending: StoredDoc<BoxDoc> = { id, version: 1, index: 0, doc };
    return {
      writes: [{ collection: BOXES, id, doc, ifVersion: 0 }],
      events: [boxEvent("BoxCreated", ownerView(req), pending, user.username)],
      result: pending,
    };
  });
  return json(renderBox(ownerView(req), reg.store.get<BoxDoc>(BOXES, stored.id) ?? stored, true));
}

export async function updateBox(req: Req): Promise<Response> {
  const body = await readPayload(req, "box");
  const user = requireUser(req);
  const target = writableBox(req);
  const errors = new FieldErrors();
  const username = errors.text(body, "username", "Username", 64);
  if (typeof username === "string" && username.toLowerCase() !== target.doc.owner) {
    errors.add("Username cannot be changed");
  }
  const name = errors.text(body, "name", "Name", 100);
  if (name === null) errors.add("Name can't be blank");
  checkName(errors, name ?? undefined);
  const texts = readTexts(errors, body);
  const isPrivate = readPrivacy(errors, body);
  errors.throwIfAny();
  const reg = req.reg;
  const id = await reg.writeIn([registryLock.namespace(target.doc.owner)], () => {
    const box = currentWritableBox(req, target.id);
    const previousTag = boxPath(reg, box.doc);
    const next: BoxDoc = { ...box.doc, private: isPrivate, updated_at: now() };
    if (typeof name === "string" && name !== box.doc.name) {
      const other = reg.box(box.doc.owner, name);
      if (other && other.id !== box.id) throw unprocessable(["Name has already been taken"]);
      next.name = name;
    }
    if (texts.short !== undefined) next.short_description = texts.short;
    if (texts.long !== undefined) next.description = texts.long;
    const renamed = next.name !== box.doc.name;
    const pending = { ...box, doc: next };
    return {
      writes: [{ collection: BOXES, id: box.id, doc: next, ifVersion: box.version }],
      events: [
        boxEvent(
          "BoxUpdated",
          ownerView(req),
          pending,
          user.username,
          renamed ? { previous_tag: previousTag } : {},
        ),
      ],
      result: box.id,
    };
  });
  return json(renderBox(ownerView(req), currentBox(req.reg, id), true));
}

export async function deleteBox(req: Req): Promise<Response> {
  const user = requireUser(req);
  const target = writableBox(req);
  const reg = req.reg;
  const last = await reg.writeIn([registryLock.namespace(target.doc.owner)], () => {
    const box = currentWritableBox(req, target.id);
    return {
      writes: [{ collection: BOXES, id: box.id, doc: null }],
      events: [boxEvent("BoxDeleted", ownerView(req), box, user.username)],
      result: renderBox(ownerView(req), box, true),
    };
  });
  reg.downloads.delete(target.id);
  return json(last);
}
