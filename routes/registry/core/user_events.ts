// Audit events of administrators' changes to a user's second factor (topic `User`, management streams only):
// who changed whose two-factor and how, never a secret.

import type { EventInput } from "../../../lib/store/mod.ts";

/** What an administrator changed: an app enrolment started, confirmed or removed; two-factor or SMS number. */
export type TwoFactorChange =
  | "totp-enrolment-started"
  | "totp-confirmed"
  | "totp-removed"
  | "two-factor-on"
  | "two-factor-off"
  | "mobile-changed";

export function twoFactorChanged(username: string, actor: string, change: TwoFactorChange): EventInput {
  return {
    Topic: "User",
    Type: "UserTwoFactorChanged",
    Key: username,
    Namespace: "",
    FilterKeys: null,
    Payload: { User: { username, actor, change } },
  };
}
