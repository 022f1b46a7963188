// Box lookups for a caller, with the registry's visibility and write rules (spec §5): the API's handlers and the
// web console's pages find boxes through these.

import type { StoredDoc } from "../../../lib/store/mod.ts";
import { type Acting, isInsider, requireUser, requireWrite } from "../core/caller.ts";
import { notFound } from "../core/errors.ts";
import { type BoxDoc, BOXES } from "../core/model.ts";
import type { RegistryState } from "../core/state.ts";

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
