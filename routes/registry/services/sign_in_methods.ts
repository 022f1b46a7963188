// The registry's sign-in methods (docs/identity.md#sign-in-methods): the ordered list of auth methods (and
// `registry`, the registry's own passwords) that password-style and OIDC sign-ins go through. Admins only.

import type { IdentityMethod } from "../../../lib/identity.ts";
import { requireAdmin } from "../core/caller.ts";
import { unprocessable } from "../core/errors.ts";
import { adminGroups, groupsOfUser } from "../core/group_bindings.ts";
import { SETTINGS, type UserDoc, USERS } from "../core/model.ts";
import type { Actor, Registry } from "../core/registry.ts";

/** The pseudo-method of the registry's own passwords. */
export const REGISTRY_METHOD = "registry";
/** What a new or upgraded data dir signs in through: today's passwords only. */
export const DEFAULT_SIGN_IN_METHODS: readonly string[] = [REGISTRY_METHOD];
/** A list longer than this is refused (each password sign-in may try every entry). */
export const MAX_SIGN_IN_METHODS = 16;
export const SIGN_IN_METHODS_ID = "sign_in_methods";
const signInTypes = new Set(["password", "ldap", "oidc"]);

export interface SignInMethods {
  methods: string[];
}

/** The stored list, or the default when none was ever stored. */
export function signInMethods(reg: Registry): readonly string[] {
  const stored = reg.store.get<SignInMethods>(SETTINGS, SIGN_IN_METHODS_ID)?.doc.methods;
  return Array.isArray(stored) ? stored : DEFAULT_SIGN_IN_METHODS;
}

/** The sign-in methods of the list that are auth methods still there, with what the console shows of them. */
export function signInAuthMethods(reg: Registry): IdentityMethod[] {
  return signInMethods(reg).flatMap((id) => {
    const m = id === REGISTRY_METHOD ? undefined : reg.identity?.method(id);
    return m ? [m] : [];
  });
}

export function getSignInMethods(who: Actor): SignInMethods {
  requireAdmin(who);
  return { methods: [...signInMethods(who.reg)] };
}

/** Replaces the list (`input.methods`, required): 422 with every problem found. */
export async function putSignInMethods(who: Actor, input: { methods?: unknown }): Promise<SignInMethods> {
  requireAdmin(who);
  const methods = readMethodList(input.methods);
  const reg = who.reg;
  const problems = methods.flatMap((id) => methodProblems(reg, id));
  if (methods.length && !problems.length) {
    const dupes = methods.filter((id, i) => methods.indexOf(id) !== i);
    if (dupes.length) problems.push(`Sign-in methods must not repeat: ${[...new Set(dupes)].join(", ")}`);
  }
  if (problems.length) throw unprocessable(problems);
  // Checked under the registry's global lock: an admin demoted or unlinked meanwhile is seen.
  await reg.write(() => {
    if (!someAdminCanSignIn(reg, { methods })) {
      throw unprocessable([
        "No registry administrator could sign in through these methods; keep registry or add a method of a linked admin",
      ]);
    }
    return { writes: [{ collection: SETTINGS, id: SIGN_IN_METHODS_ID, doc: { methods } }] };
  });
  return { methods: [...signInMethods(reg)] };
}

function readMethodList(value: unknown): string[] {
  if (value === undefined || value === null) throw unprocessable(["Methods can't be blank"]);
  if (!Array.isArray(value)) throw unprocessable(["Methods must be a list of sign-in method ids"]);
  if (value.length === 0) throw unprocessable(["Methods must name at least one sign-in method"]);
  if (value.length > MAX_SIGN_IN_METHODS) {
    throw unprocessable([`Methods can name at most ${MAX_SIGN_IN_METHODS} sign-in methods`]);
  }
  const notText = value.filter((v) => typeof v !== "string" || v === "" || v.length > 128);
  if (notText.length) throw unprocessable(["Each sign-in method must be an auth-method id or registry"]);
  return value as string[];
}

function methodProblems(reg: Registry, id: string): string[] {
  if (id === REGISTRY_METHOD) return [];
  const m = reg.identity?.method(id);
  if (!m) return [`Sign-in method '${id}' does not exist`];
  if (!signInTypes.has(m.type)) {
    return [`Sign-in method '${id}' is of type ${m.type}; password, ldap or oidc only`];
  }
  if (m.scopeType !== "global" && m.scopeType !== "org") {
    return [`Sign-in method '${id}' is not in the global scope or an org scope`];
  }
  if (m.type === "oidc" && m.state !== "active-public" && m.state !== "active-private") {
    return [
      `Sign-in method '${id}' is an OIDC method in state ${m.state}; make it active-public or active-private`,
    ];
  }
  return [];
}

/**
 * A change an administrator asks for, as the lockout check sees it: another sign-in list, users replaced
 * (`null`: deleted), other admin groups. What is not named stays as stored.
 */
export interface SignInChange {
  methods?: readonly string[];
  users?: ReadonlyMap<string, UserDoc | null>;
  adminGroups?: readonly string[];
}

/**
 * Whether some registry administrator (stored admin, or member of an admin group) could sign in through the
 * sign-in list after `change`: `registry` listed and a registry password, or a linked person with an account in
 * a listed method.
 */
export function someAdminCanSignIn(reg: Registry, change: SignInChange = {}): boolean {
  const methods = change.methods ?? signInMethods(reg);
  const groups = change.adminGroups ?? adminGroups(reg);
  const byRegistry = methods.includes(REGISTRY_METHOD);
  for (const stored of reg.store.list<UserDoc>(USERS)) {
    const u = change.users?.has(stored.id) ? change.users.get(stored.id) : stored.doc;
    if (!u) continue;
    if (!u.admin && !groupsOfUser(reg, u).some((g) => groups.includes(g))) continue;
    if (byRegistry && u.password_hash) return true;
    const linked = u.identity?.user_id;
    const person = linked ? reg.identity?.user(linked) : undefined;
    if (person?.accountMethodIds.some((m) => methods.includes(m))) return true;
  }
  return false;
}

/**
 * The 422 refusing `change` when it would leave no registry administrator able to sign in (while one can now):
 * `action` names it in the message. Called under the registry's global lock, as every such change is made.
 */
export function refuseAdminLockout(reg: Registry, change: SignInChange, action: string): void {
  if (!someAdminCanSignIn(reg) || someAdminCanSignIn(reg, change)) return;
  throw unprocessable([
    `${action} would leave no registry administrator able to sign in through the sign-in methods; ` +
    "give another administrator a way to sign in first",
  ]);
}
