// Audit events of the registry's identity (docs/identity.md#events), on the auth topic beside the auth methods'
// sign-in events (topic `AuthToken`, management streams only): who signed in through which method, who was
// provisioned, which link an administrator made or removed. Never a secret.

import type { EventInput } from "../../../lib/store/mod.ts";

function authEvent(type: string, key: string, payload: Record<string, unknown>): EventInput {
  return {
    Topic: "AuthToken",
    Type: type,
    Key: key,
    Namespace: "",
    FilterKeys: null,
    Payload: { AuthToken: payload },
  };
}

/** A sign-in through a sign-in method completed (after its second factor). */
export function registrySignIn(
  username: string,
  via: { methodId: string; methodType: string; userId?: string; accountId?: string },
  clientIp: string,
): EventInput {
  return authEvent("RegistrySignIn", username, {
    username,
    auth_method_id: via.methodId,
    auth_method_type: via.methodType,
    ...(via.userId ? { user_id: via.userId } : {}),
    ...(via.accountId ? { account_id: via.accountId } : {}),
    client_ip: clientIp,
  });
}

/** A registry user created at a person's first sign-in. */
export function registryUserProvisioned(
  username: string,
  via: { methodId: string; methodType: string; userId: string; accountId: string },
): EventInput {
  return authEvent("RegistryUserProvisioned", username, {
    username,
    user_id: via.userId,
    account_id: via.accountId,
    auth_method_id: via.methodId,
    auth_method_type: via.methodType,
  });
}

/** An administrator linked a registry user to an auth-method user, or removed the link. */
export function registryIdentityChanged(
  type: "RegistryIdentityLinked" | "RegistryIdentityUnlinked",
  username: string,
  userId: string,
  actor: string,
): EventInput {
  return authEvent(type, username, { username, user_id: userId, actor });
}

/** An organization's group bindings, or the registry's admin groups, as an administrator or owner left them. */
export function groupBindingsChanged(
  scope: { organization: string } | { admin_groups: readonly string[] },
  bindings: readonly { managed_group_id: string; role: string }[] | undefined,
  actor: string,
): EventInput {
  const key = "organization" in scope ? scope.organization : "registry";
  return authEvent("RegistryGroupBindingsChanged", key, {
    ...scope,
    ...(bindings ? { group_bindings: bindings.map((b) => ({ ...b })) } : {}),
    actor,
  });
}
