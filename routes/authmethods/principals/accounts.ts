// /v1/accounts: password accounts created by admins (others appear at first login), reads by owner or
// admin, PATCH, delete (with the user and tokens), set-password and change-password.

import { ApiError } from "../../../lib/errors.ts";
import { respondWithChildList } from "../lists/list_route.ts";
import { json, type RequestContext } from "../../../lib/http.ts";
import type { CommitPlan, DocWrite, StoredDoc } from "../../../lib/store/mod.ts";
import { passwordDefaults } from "../methods/attrs_password.ts";
import { recordFailure } from "../login/login_failures.ts";
import { assertAdminsRemain, deleteAccounts, emptyPlan, transactRevoking } from "../cascade.ts";
import { assertIdFormat, collections, isObject, lockKeys, nowIso, parentLocks } from "../common.ts";
import {
  fieldError,
  FieldErrors,
  forbidden,
  notFound,
  unauthenticated,
  versioned,
  versionMismatch,
} from "../errors.ts";
import {
  applyNameDescription,
  checkChildPatchKeys,
  checkCreateVersion,
  fieldMask,
  rejectReadOnly,
  requireVersion,
} from "../fields.ts";
import { methodIdPrefixes } from "../methods/methods.ts";
import { accountWithUser, renderAccount, userProfile } from "../principals.ts";
import { type AuthService, readObjectBody } from "../service.ts";
import type { AccountDoc, ActorCaller, MethodDoc, UserDoc } from "../state.ts";

const accountPrefixes = ["acctpw", "acctoidc", "acctldap"];
const readOnly = ["id", "scope", "created_time", "updated_time", "authorized_actions"];

/** The method's login-name and password minimums (its attributes over the defaults). */
function minLengths(method: MethodDoc): typeof passwordDefaults {
  return { ...passwordDefaults, ...method.attributes } as typeof passwordDefaults;
}

function checkLoginName(name: unknown, method: MethodDoc, errors: FieldErrors): string | undefined {
  if (typeof name !== "string" || name === "") {
    errors.add("attributes.login_name", "This is a required field.");
    return undefined;
  }
  if (!/^[a-z0-9.-]+$/.test(name)) {
    errors.add(
      "attributes.login_name",
      "Login name must contain only lowercase letters, digits, '.' and '-'.",
    );
    return undefined;
  }
  if (name.length < minLengths(method).min_login_name_length) {
    errors.add(
      "attributes.login_name",
      `Login name must be at least ${minLengths(method).min_login_name_length} characters.`,
    );
    return undefined;
  }
  if (name.length > 256) errors.add("attributes.login_name", "Login name is too long.");
  return name;
}

export function checkPassword(
  pw: unknown,
  method: MethodDoc,
  field: string,
  errors: FieldErrors,
): string | undefined {
  if (typeof pw !== "string") {
    errors.add(field, "Expected a string value.");
    return undefined;
  }
  const min = minLengths(method).min_password_length;
  if ([...pw].length < min) errors.add(field, `Password must be at least ${min} characters.`);
  else if (pw.length > 1024) errors.add(field, "Password is too long.");
  else return pw;
  return undefined;
}

/**
 * The account's method, read again after the request body arrived: a method delete may have committed (taking
 * the account with it) while the body was on its way.
 */
function methodOf(svc: AuthService, account: AccountDoc): MethodDoc {
  const method = svc.state.method(account.auth_method_id);
  if (!method) throw notFound();
  return method.doc;
}

/** Id syntax (400), then the caller's right (401/403: admin, or the owner when `ownerMay`), then existence. */
function loadAccount(svc: AuthService, ctx: RequestContext, ownerMay: boolean) {
  const id = ctx.params.id!;
  assertIdFormat(id, accountPrefixes);
  const caller = svc.caller(ctx);
  if (caller.kind !== "user") throw unauthenticated();
  const stored = svc.state.get<AccountDoc>(collections.accounts, id);
  const own = stored !== undefined &&
    svc.state.get<UserDoc>(collections.users, stored.doc.user_id)?.id === caller.userId;
  if (!caller.admin && !(ownerMay && own)) throw forbidden();
  if (!stored) throw notFound();
  return { id, caller, stored };
}

export async function createAccount(svc: AuthService, ctx: RequestContext): Promise<Response> {
  const caller = svc.requireAdmin(ctx);
  const body = await readObjectBody(ctx);
  const errors = new FieldErrors();
  rejectReadOnly(body, readOnly, errors);
  checkCreateVersion(body, errors);
  const methodId = body.auth_method_id;
  if (typeof methodId !== "string") {
    throw fieldError({ name: "auth_method_id", description: "This is a required field." });
  }
  assertIdFormat(methodId, methodIdPrefixes, "auth_method_id");
  const method = svc.state.method(methodId);
  if (!method) throw notFound();
  if (method.doc.type !== "password") {
    throw fieldError({
      name: "auth_method_id",
      description:
        "Accounts can only be created in password auth methods; OIDC and LDAP accounts appear at first login.",
    });
  }
  if (body.type !== undefined && body.type !== "password") {
    errors.add("type", "Must match the auth method's type.");
  }
  const attrs = isObject(body.attributes) ? body.attributes : {};
  for (const k of Object.keys(attrs)) {
    if (k !== "login_name" && k !== "password") errors.add(`attributes.${k}`, "Unknown field.");
  }
  const named: { name?: string; description?: string } = {};
  applyNameDescription(body, named, errors);
  const loginName = checkLoginName(attrs.login_name, method.doc, errors);
  const password = attrs.password === undefined || attrs.password === null
    ? undefined
    : checkPassword(attrs.password, method.doc, "attributes.password", errors);
  errors.throwIfAny();
  // Checked before hashing too: a duplicate gets its 400 at once, not a 503 when the hashing queue is full.
  assertLoginNameFree(svc, methodId, loginName!);
  const passwordHash = password !== undefined ? await svc.hasher.hash(password) : undefined;
  const locks = [`auth/login/${methodId}/${loginName}`, lockKeys.method(methodId)];
  const created = await svc.state.store.transact(locks, () => {
    if (!svc.state.method(methodId)) throw notFound();
    assertLoginNameFree(svc, methodId, loginName!);
    const c = accountWithUser({
      methodId,
      scopeId: method.doc.scope_id,
      type: "password",
      key: loginName!,
      attributes: { login_name: loginName },
      ...(passwordHash ? { passwordHash } : {}),
      ...named,
    });
    return { writes: c.writes, result: c.accountId };
  });
  return json(
    renderAccount(svc.state, svc.state.get<AccountDoc>(collections.accounts, created.result)!, caller),
  );
}

function assertLoginNameFree(svc: AuthService, methodId: string, loginName: string): void {
  if (svc.state.accountByKey(methodId, loginName)) {
    throw fieldError({
      name: "attributes.login_name",
      description: "Login name is already in use in this auth method.",
    });
  }
}

export function listAccounts(svc: AuthService, ctx: RequestContext): Response {
  const caller = svc.requireAdmin(ctx);
  const methodId = ctx.url.searchParams.get("auth_method_id");
  if (!methodId) throw fieldError({ name: "auth_method_id", description: "This is a required field." });
  assertIdFormat(methodId, methodIdPrefixes, "auth_method_id");
  if (!svc.state.method(methodId)) throw notFound();
  return respondWithChildList<AccountDoc>(svc, ctx, {
    resource: "account",
    collection: collections.accounts,
    caller,
    belongs: (account) => account.auth_method_id === methodId,
    tombstoneBelongs: (tombstone) => tombstone.parent_id === methodId,
    render: (a) => renderAccount(svc.state, a, caller),
    queryParts: [methodId],
  });
}

/** A read shows the managed groups the account is a member of, as Boundary's does. */
export function readAccount(svc: AuthService, ctx: RequestContext): Response {
  const { caller, stored } = loadAccount(svc, ctx, true);
  const groups = svc.state.memberships.groupIdsOfAccount(stored.doc);
  return json({
    ...renderAccount(svc.state, stored, caller),
    ...(groups.length ? { managed_group_ids: groups } : {}),
  });
}

/**
 * Commits `build`'s writes to account `id` if it is still at `version`. With `revokes`, the build deletes
 * tokens of that user and the commit holds their locks (transactRevoking).
 */
async function commitAccount(
  svc: AuthService,
  id: string,
  version: number,
  build: (cur: StoredDoc<AccountDoc>) => CommitPlan,
  options: { extraLocks?: string[]; sharedLocks?: string[]; revokes?: string } = {},
): Promise<void> {
  const locks = [`${collections.accounts}/${id}`, ...options.extraLocks ?? []];
  const sharedLocks = options.sharedLocks ?? [];
  const plan = () => {
    const cur = svc.state.get<AccountDoc>(collections.accounts, id);
    if (!cur) throw notFound();
    if (cur.version !== version) throw versionMismatch(version, cur.version);
    return build(cur);
  };
  await versioned(
    options.revokes === undefined
      ? svc.state.store.transact(locks, plan, { sharedLocks })
      : transactRevoking(svc.state, options.revokes, locks, sharedLocks, plan),
  );
}

export async function updateAccount(svc: AuthService, ctx: RequestContext): Promise<Response> {
  const { id, caller, stored } = loadAccount(svc, ctx, false);
  const body = await readObjectBody(ctx);
  const errors = new FieldErrors();
  checkChildPatchKeys(
    body,
    ["name", "description", "version", "attributes", "type", "auth_method_id"],
    readOnly,
    stored.doc,
    errors,
  );
  errors.throwIfAny();
  const version = requireVersion(body);
  const mask = fieldMask(ctx.url, body, (p) => ["name", "description", "attributes.login_name"].includes(p));
  if (mask.some((p) => !["name", "description", "attributes.login_name"].includes(p))) {
    throw fieldError(
      mask.filter((p) => !["name", "description", "attributes.login_name"].includes(p)).map((p) => ({
        name: p,
        description: "Unknown field.",
      })),
    );
  }
  const next: AccountDoc = { ...stored.doc, attributes: { ...stored.doc.attributes } };
  const values: Record<string, unknown> = {};
  for (const k of mask) values[k] = k in body ? body[k] : null;
  applyNameDescription(values, next, errors, new Set(mask));
  let newLogin: string | undefined;
  if (mask.includes("attributes.login_name")) {
    if (stored.doc.type !== "password") {
      errors.add("attributes.login_name", "Only password accounts have a settable login name.");
    } else {
      const method = methodOf(svc, stored.doc);
      newLogin = checkLoginName(
        isObject(body.attributes) ? body.attributes.login_name : undefined,
        method,
        errors,
      );
    }
  }
  errors.throwIfAny();
  await commitAccount(
    svc,
    id,
    version,
    (cur) => {
      if (newLogin !== undefined && newLogin !== cur.doc.key) {
        assertLoginNameFree(svc, cur.doc.auth_method_id, newLogin);
      }
      const now = nowIso();
      const doc: AccountDoc = { ...next, updated_time: now };
      if (newLogin !== undefined) {
        doc.key = newLogin;
        doc.attributes.login_name = newLogin;
      }
      const writes: DocWrite[] = [{ collection: collections.accounts, id, doc, ifVersion: version }];
      const user = svc.state.get<UserDoc>(collections.users, cur.doc.user_id);
      if (user && newLogin !== undefined) {
        writes.push({
          collection: collections.users,
          id: user.id,
          doc: { ...user.doc, ...userProfile(doc.attributes), updated_time: now },
        });
      }
      return { writes };
    },
    {
      extraLocks: newLogin
        ? [
          `auth/login/${stored.doc.auth_method_id}/${newLogin}`,
          `${collections.users}/${stored.doc.user_id}`,
        ]
        : [],
    },
  );
  return json(renderAccount(svc.state, svc.state.get<AccountDoc>(collections.accounts, id)!, caller));
}

export async function removeAccount(svc: AuthService, ctx: RequestContext): Promise<Response> {
  const { id, stored } = loadAccount(svc, ctx, false);
  const locks = [`${collections.accounts}/${id}`, lockKeys.admins];
  await transactRevoking(svc.state, stored.doc.user_id, locks, parentLocks([stored.doc]), () => {
    if (!svc.state.get(collections.accounts, id)) throw notFound();
    const plan = emptyPlan();
    deleteAccounts(svc.state, [id], plan, nowIso(), "account_deleted");
    assertAdminsRemain(svc.state, plan);
    return { writes: plan.writes, events: plan.events };
  });
  return json({});
}

/** Loads the account of a set/change-password request and its body; only password accounts have passwords. */
async function loadPasswordRequest(svc: AuthService, ctx: RequestContext, ownerMay: boolean) {
  const loaded = loadAccount(svc, ctx, ownerMay);
  const body = await readObjectBody(ctx);
  if (loaded.stored.doc.type !== "password") {
    throw fieldError({ name: "id", description: "Only password accounts have passwords." });
  }
  const method = methodOf(svc, loaded.stored.doc);
  return { ...loaded, body, method };
}

export async function setPassword(svc: AuthService, ctx: RequestContext): Promise<Response> {
  const { id, caller, stored, body, method } = await loadPasswordRequest(svc, ctx, false);
  const errors = new FieldErrors();
  const version = requireVersion(body);
  const pw = body.password === undefined || body.password === null
    ? undefined
    : checkPassword(body.password, method, "password", errors);
  errors.throwIfAny();
  // A stale version is refused before hashing (409 at once, not a 503 when the hashing queue is full);
  // commitAccount compares again under the lock.
  if (stored.version !== version) throw versionMismatch(version, stored.version);
  await svc.passwordTurns.run(id, async () => {
    // Earlier calls on this account have committed: one on this version has made it stale.
    checkCurrentVersion(svc, id, version);
    const hash = pw === undefined ? undefined : await svc.hasher.hash(pw);
    await commitAccount(
      svc,
      id,
      version,
      (cur) => {
        const { password_hash: _old, ...rest } = cur.doc;
        const doc: AccountDoc = { ...rest, ...(hash ? { password_hash: hash } : {}), updated_time: nowIso() };
        const revoked = svc.state.revokeTokens(
          svc.state.tokensOfUser(cur.doc.user_id),
          "password_set",
          doc.updated_time,
        );
        return {
          writes: [{ collection: collections.accounts, id, doc, ifVersion: version }, ...revoked.writes],
          events: revoked.events,
        };
      },
      { revokes: stored.doc.user_id, sharedLocks: parentLocks([stored.doc]) },
    );
  });
  return json(renderAccount(svc.state, svc.state.get<AccountDoc>(collections.accounts, id)!, caller));
}

/** 404 when the account is gone, 409 when its version is no longer `version`. */
function checkCurrentVersion(svc: AuthService, id: string, version: number): void {
  const current = svc.state.get<AccountDoc>(collections.accounts, id);
  if (!current) throw notFound();
  if (current.version !== version) throw versionMismatch(version, current.version);
}

export async function changePassword(svc: AuthService, ctx: RequestContext): Promise<Response> {
  const { id, caller, stored, body, method } = await loadPasswordRequest(svc, ctx, true);
  const version = requireVersion(body);
  const errors = new FieldErrors();
  if (typeof body.current_password !== "string" || body.current_password === "") {
    errors.add("current_password", "This is a required field.");
  }
  const next = checkPassword(body.new_password, method, "new_password", errors);
  if (next !== undefined && next === body.current_password) {
    errors.add("new_password", "The new password must differ from the current one.");
  }
  errors.throwIfAny();
  if (stored.version !== version) throw versionMismatch(version, stored.version);
  await svc.passwordTurns.run(id, async () => {
    checkCurrentVersion(svc, id, version);
    const attempt = await svc.throttle.begin(stored.doc.auth_method_id, stored.doc.key, ctx.clientIp);
    if (
      !await attempt.check(() => svc.hasher.verify(stored.doc.password_hash, body.current_password as string))
    ) {
      await recordFailure(svc, ctx, stored.doc.auth_method_id, stored.doc.key, "invalid_credentials");
      throw new ApiError(403, "Failed to change password.");
    }
    const hash = await svc.hasher.hash(next!);
    await commitAccount(
      svc,
      id,
      version,
      (cur) => {
        const doc: AccountDoc = { ...cur.doc, password_hash: hash, updated_time: nowIso() };
        const others = svc.state.tokensOfUser(cur.doc.user_id).filter((t) =>
          t.id !== (caller as ActorCaller & { kind: "user" }).tokenId
        );
        const revoked = svc.state.revokeTokens(others, "password_changed", doc.updated_time);
        return {
          writes: [{ collection: collections.accounts, id, doc, ifVersion: version }, ...revoked.writes],
          events: revoked.events,
        };
      },
      { revokes: stored.doc.user_id, sharedLocks: parentLocks([stored.doc]) },
    );
  });
  return json(renderAccount(svc.state, svc.state.get<AccountDoc>(collections.accounts, id)!, caller));
}
