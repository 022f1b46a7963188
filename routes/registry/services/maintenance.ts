// Maintenance mode (admins): while on, only administrators use the registry (the API answers 503, the console
// too). WHARF_MAINTENANCE forces it on.

import { requireAdmin } from "../core/caller.ts";
import { FieldErrors } from "../core/fields.ts";
import { SETTINGS } from "../core/model.ts";
import type { Actor, Registry } from "../core/registry.ts";

export interface MaintenanceState {
  enabled: boolean;
  /** On by WHARF_MAINTENANCE: the stored switch does not turn it off. */
  forced: boolean;
}

/** Whether maintenance mode is on (admins only). */
export function getMaintenance(who: Actor): MaintenanceState {
  requireAdmin(who);
  return maintenanceState(who.reg);
}

function maintenanceState(reg: Registry): MaintenanceState {
  const stored = reg.store.get<{ enabled: boolean }>(SETTINGS, "maintenance")?.doc.enabled === true;
  return {
    enabled: stored || reg.settings.maintenanceForced,
    forced: reg.settings.maintenanceForced,
  };
}

/** Turns the stored switch on or off (`input.enabled`, required): the state after. */
export async function putMaintenance(who: Actor, input: { enabled?: unknown }): Promise<MaintenanceState> {
  requireAdmin(who);
  const errors = new FieldErrors();
  const enabled = errors.bool(input, "enabled", "Enabled");
  if (enabled === undefined || enabled === null) errors.add("Enabled can't be blank");
  errors.throwIfAny();
  await who.reg.write(() => ({
    writes: [{ collection: SETTINGS, id: "maintenance", doc: { enabled: enabled === true } }],
  }));
  return maintenanceState(who.reg);
}
