// A login's throttled attempt and its failure record (an event, bounded by failure_events.ts), shared by the
// password, LDAP and OIDC logins and by change-password.

import { ApiError } from "../../../lib/errors.ts";
import type { RequestContext } from "../../../lib/http.ts";
import type { AuthService } from "../service.ts";

/**
 * Begins a throttled attempt under the name key `nameKey` (429 when locked, recorded as a `throttled` failure for
 * `loginName` as sent).
 */
export async function beginAttempt(
  svc: AuthService,
  ctx: RequestContext,
  methodId: string,
  nameKey: string,
  loginName: string,
) {
  try {
    return await svc.throttle.begin(methodId, nameKey, ctx.clientIp);
  } catch (err) {
    if (err instanceof ApiError && err.status === 429) {
      await recordFailure(svc, ctx, methodId, loginName, "throttled");
    }
    throw err;
  }
}

/** An `AuthenticationFailed` event, or a count in the window's summary past the bounds (failure_events.ts). */
export async function recordFailure(
  svc: AuthService,
  ctx: RequestContext,
  methodId: string,
  loginName: string,
  reason: string,
): Promise<void> {
  await svc.failureEvents.record({ methodId, loginName, reason, clientIp: ctx.clientIp });
}
