// What ordinary writes cannot set, for an administrator: a box's download count from before this registry and
// the creation and update times of the box, its versions and providers (what `wharf registry import` carries
// over).

import type { StoredDoc } from "../../../lib/store/mod.ts";
import { requireAdmin } from "../core/caller.ts";
import { FieldErrors, type Payload } from "../core/fields.ts";
import { notFound } from "../core/errors.ts";
import { boxEvent } from "../core/events.ts";
import { type BoxDoc, BOXES } from "../core/model.ts";
import type { Actor } from "../core/registry.ts";
import { currentBox, ownerView } from "./boxes.ts";
import { registryLock } from "../core/locks.ts";

/*
 * Admins only, whatever the box's privacy. `downloads_imported` is a base added to the downloads counted here
 * (null: none); the times replace the stored ones. Versions are matched by their exact number, providers by
 * (name, architecture); every key is optional in a change, an unknown version or provider is a 422. One
 * commit, one BoxUpdated event.
 */

/** A history change as sent, unchecked. */
export type HistoryInput = Payload;

/** The box `owner/name` whose history an administrator reads or changes (404 when absent). */
export function historyBox(who: Actor, owner: string, name: string): StoredDoc<BoxDoc> {
  requireAdmin(who);
  const box = who.reg.box(owner, name);
  if (!box) throw notFound();
  return box;
}

type Times = { created_at?: string; updated_at?: string };

function readTimes(errors: FieldErrors, body: Payload, what: string): Times {
  const out: Times = {};
  for (const key of ["created_at", "updated_at"] as const) {
    const v = body[key];
    if (v === undefined || v === null) continue;
    const ms = typeof v === "string" ? Date.parse(v) : NaN;
    if (Number.isNaN(ms)) errors.add(`${what} ${key} must be an ISO 8601 time`);
    else out[key] = new Date(ms).toISOString();
  }
  return out;
}

function list(errors: FieldErrors, body: Payload, key: string, what: string): Payload[] {
  const v = body[key];
  if (v === undefined || v === null) return [];
  if (!Array.isArray(v) || v.some((x) => typeof x !== "object" || x === null || Array.isArray(x))) {
    errors.add(`${what} ${key} must be a list of objects`);
    return [];
  }
  return v as Payload[];
}

/** Changes the history of the box `owner/name`: the box after. */
export async function putHistory(
  who: Actor,
  owner: string,
  name: string,
  body: HistoryInput,
): Promise<StoredDoc<BoxDoc>> {
  const admin = requireAdmin(who);
  const target = historyBox(who, owner, name);
  const errors = new FieldErrors();
  const base = body.downloads_imported;
  if (base !== undefined && base !== null && !(Number.isSafeInteger(base) && (base as number) >= 0)) {
    errors.add("Downloads imported must be a whole number, 0 or more");
  }
  const boxTimes = readTimes(errors, body, "Box");
  const versions = list(errors, body, "versions", "Box").map((v) => ({
    number: typeof v.version === "string" ? v.version : "",
    times: readTimes(errors, v, `Version ${String(v.version)}`),
    providers: list(errors, v, "providers", `Version ${String(v.version)}`).map((p) => ({
      name: String(p.name),
      architecture: typeof p.architecture === "string" ? p.architecture : "unknown",
      times: readTimes(errors, p, `Provider ${String(p.name)}`),
    })),
  }));
  errors.throwIfAny();
  const reg = who.reg;
  // An admin write, but confined to one box (ifVersion): its namespace's key, like any box update.
  const id = await reg.writeIn([registryLock.namespace(target.doc.owner)], () => {
    const box = currentBox(reg, target.id);
    const doc: BoxDoc = structuredClone(box.doc);
    const missing = new FieldErrors();
    for (const v of versions) {
      const version = doc.versions.find((x) => x.version === v.number);
      if (!version) {
        missing.add(`Version ${v.number} does not exist`);
        continue;
      }
      Object.assign(version, v.times);
      for (const p of v.providers) {
        const provider = version.providers.find((x) =>
          x.name === p.name && x.architecture === p.architecture
        );
        if (!provider) {
          missing.add(`Provider ${p.name}/${p.architecture} of version ${v.number} does not exist`);
        } else Object.assign(provider, p.times);
      }
    }
    missing.throwIfAny();
    Object.assign(doc, boxTimes);
    if (base === null) delete doc.downloads_imported;
    else if (base !== undefined) doc.downloads_imported = base as number;
    const pending = { ...box, doc };
    return {
      writes: [{ collection: BOXES, id: box.id, doc, ifVersion: box.version }],
      events: [boxEvent("BoxUpdated", ownerView(who), pending, admin.username)],
      result: box.id,
    };
  });
  return currentBox(reg, id);
}
