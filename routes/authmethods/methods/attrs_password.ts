// Attributes of a password auth method: minimum login-name and password lengths (uint32, with defaults).

import { type AttrInput, type AttrOutcome, readUint32, rejectUnknown } from "./attrs_common.ts";

export const passwordDefaults = { min_login_name_length: 3, min_password_length: 8 };
const known = new Set(Object.keys(passwordDefaults));

export function applyPasswordAttributes(a: AttrInput): AttrOutcome {
  rejectUnknown(a.input, known, a.errors);
  const out = { ...passwordDefaults, ...a.base };
  for (const key of known) {
    if (!(key in a.input)) continue;
    const v = a.input[key];
    const n = v === null ? 0 : readUint32(v, key, a.errors);
    if (n === undefined) continue;
    out[key as keyof typeof passwordDefaults] = n === 0
      ? passwordDefaults[key as keyof typeof passwordDefaults]
      : n;
  }
  return { attributes: out, secrets: {} };
}

/** Renders the attributes, both always shown. */
export function renderPasswordAttributes(attrs: Record<string, unknown>): Record<string, unknown> {
  return { ...passwordDefaults, ...attrs };
}
