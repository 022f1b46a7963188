// Boxes for a caller (docs/registry.md#vagrant-24): find one the caller may see or write, create, update and
// delete one. The API's handlers and the web console's pages both call these.

import { ulid } from "../../../lib/ids.ts";
import type { StoredDoc } from "../../../lib/store/mod.ts";
import { type Acting, isInsider, requireUser, requireWrite } from "../core/caller.ts";
import { notFound, unprocessable } from "../core/errors.ts";
import { boxEvent } from "../core/events.ts";
import { FieldErrors } from "../core/fields.ts";
import { registryLock } from "../core/locks.ts";
import { type BoxDoc, BOXES, now } from "../core/model.ts";
import type { Actor } from "../core/registry.ts";
import { boxPath, type View } from "../core/render.ts";
import { isValidBoxName, LONG_TEXT_MAX, SHORT_DESCRIPTION_MAX } from "../core/rules.ts";
import type { RegistryState } from "../core/state.ts";

/**
 * A box's fields as a caller sends them, unchecked (the API's JSON, a console form): every rule on them and its
 * 422 message is here. `is_private` wins over `private`; absent texts stay as they are on update.
 */
export type BoxInput = {
  username?: unknown;
  name?: unknown;
  short_description?: unknown;
  description?: unknown;
  is_private?: unknown;
  private?: unknown;
};

/** A box the caller may see, and whether the caller is an insider of its namespace. */
export interface VisibleBox {
  box: StoredDoc<BoxDoc>;
  insider: boolean;
}

/** The box `owner/name` when the caller may see it (404 otherwise). */
export function visibleBox(who: Acting, owner: string, name: string): VisibleBox {
  const box = who.reg.box(owner, name);
  if (!box) throw notFound();
  const insider = isInsider(who.reg, who.caller, box.doc.owner);
  if (box.doc.private && !insider) throw notFound();
  return { box, insider };
}

/** The box for a write: visible, writable, solvent. */
export function writableBox(who: Acting, owner: string, name: string): StoredDoc<BoxDoc> {
  requireUser(who);
  const { box } = visibleBox(who, owner, name);
  requireWrite(who, box.doc.owner, box.doc.private);
  return box;
}

/** Re-reads the box inside a commit; a concurrent delete or rename makes it 404. */
export function currentBox(reg: RegistryState, id: string): StoredDoc<BoxDoc> {
  const box = reg.store.get<BoxDoc>(BOXES, id);
  if (!box) throw notFound();
  return box;
}

/**
 * currentBox for a write's plan, with the caller's right to write checked again: membership and delinquency
 * change under the global key, which no plan of a scoped write overlaps, so the check inside the plan is exact
 * (the one before it may be stale by the time the write commits).
 */
export function currentWritableBox(who: Acting, id: string): StoredDoc<BoxDoc> {
  const box = currentBox(who.reg, id);
  requireWrite(who, box.doc.owner, box.doc.private);
  return box;
}

/** The view of the box's owner: what events carry. */
export function ownerView(who: Actor): View {
  return { reg: who.reg, origin: who.origin, insider: true, api: who.api };
}

function readPrivacy(errors: FieldErrors, body: BoxInput): boolean {
  const key = "is_private" in body && body.is_private !== null ? "is_private" : "private";
  const v = errors.bool(body, key, "Is private");
  return v === undefined || v === null ? true : v;
}

function readTexts(errors: FieldErrors, body: BoxInput) {
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

/** A new box in `input.username`'s namespace (the caller's own by default). */
export async function createBox(who: Actor, input: BoxInput): Promise<StoredDoc<BoxDoc>> {
  const user = requireUser(who);
  const errors = new FieldErrors();
  const username = errors.text(input, "username", "Username", 64) ?? user.username;
  const ownerKey = username.toLowerCase();
  if (who.reg.namespaceName(ownerKey) === undefined) throw notFound();
  requireWrite(who, ownerKey);
  const name = errors.required(input, "name", "Name", 100);
  checkName(errors, name);
  const texts = readTexts(errors, input);
  const isPrivate = readPrivacy(errors, input);
  errors.throwIfAny();
  const reg = who.reg;
  // Box names are unique per namespace: creates and renames in it take its key.
  const stored = await reg.writeIn([registryLock.namespace(ownerKey)], () => {
    if (reg.namespaceName(ownerKey) === undefined) throw notFound();
    requireWrite(who, ownerKey);
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
      events: [boxEvent("BoxCreated", ownerView(who), pending, user.username)],
      result: pending,
    };
  });
  return reg.store.get<BoxDoc>(BOXES, stored.id) ?? stored;
}

/** Changes the box `owner/name` (a rename keeps its id); the box as stored after. */
export async function updateBox(
  who: Actor,
  owner: string,
  boxName: string,
  input: BoxInput,
): Promise<StoredDoc<BoxDoc>> {
  const user = requireUser(who);
  const target = writableBox(who, owner, boxName);
  const errors = new FieldErrors();
  const username = errors.text(input, "username", "Username", 64);
  if (typeof username === "string" && username.toLowerCase() !== target.doc.owner) {
    errors.add("Username cannot be changed");
  }
  const name = errors.text(input, "name", "Name", 100);
  if (name === null) errors.add("Name can't be blank");
  checkName(errors, name ?? undefined);
  const texts = readTexts(errors, input);
  const isPrivate = readPrivacy(errors, input);
  errors.throwIfAny();
  const reg = who.reg;
  const id = await reg.writeIn([registryLock.namespace(target.doc.owner)], () => {
    const box = currentWritableBox(who, target.id);
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
          ownerView(who),
          pending,
          user.username,
          renamed ? { previous_tag: previousTag } : {},
        ),
      ],
      result: box.id,
    };
  });
  return currentBox(reg, id);
}

/**
 * Deletes the box `owner/name` and its download count; `present` turns the box into what the caller gets
 * back, inside the commit (while its download count still stands).
 */
export async function deleteBox<R>(
  who: Actor,
  owner: string,
  name: string,
  present: (box: StoredDoc<BoxDoc>) => R,
): Promise<R> {
  const user = requireUser(who);
  const target = writableBox(who, owner, name);
  const reg = who.reg;
  const last = await reg.writeIn([registryLock.namespace(target.doc.owner)], () => {
    const box = currentWritableBox(who, target.id);
    return {
      writes: [{ collection: BOXES, id: box.id, doc: null }],
      events: [boxEvent("BoxDeleted", ownerView(who), box, user.username)],
      result: present(box),
    };
  });
  reg.downloads.delete(target.id);
  return last;
}
