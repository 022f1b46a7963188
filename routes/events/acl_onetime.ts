// One-time tokens (docs/events.md#one-time-tokens): issued for the calling token, exchanged once for it.

import type { AppContext } from "../../lib/app.ts";
import type { RequestContext } from "../../lib/http.ts";
import type { Route } from "../../lib/router.ts";
import type { DocChange, StoredDoc } from "../../lib/store/mod.ts";
import { uuid } from "../../lib/ids.ts";
import { bodyField, renderToken, rfc3339 } from "./acl_model.ts";
import { type AclState, permissionDenied } from "./acl_state.ts";
import { ApiError } from "../../lib/errors.ts";
import { decodeObjectBody, nomadJson, optionalString, requireAclsEnabled } from "./acl_http.ts";

export const oneTimeCollection = "cluster/acl_one_time_tokens";
const oneTimeHmacPurpose = "events.acl-one-time-secret";

/** One per token (by AccessorID); the secret is kept only as an HMAC, it is shown once when issued. */
interface StoredOneTimeToken {
  AccessorID: string;
  SecretHmac: string;
  ExpiresAt: string;
  CreateIndex: number;
  ModifyIndex: number;
}

/** Which accessor a one-time secret's HMAC belongs to, kept current from the store. */
class OneTimeIndex {
  #byHmac = new Map<string, string>();
  readonly #unwatch: () => void;

  constructor(ctx: AppContext) {
    const { store } = ctx.data;
    for (const s of store.list<StoredOneTimeToken>(oneTimeCollection)) {
      this.#byHmac.set(s.doc.SecretHmac, s.id);
    }
    this.#unwatch = store.watch(oneTimeCollection, (c) => this.#onChange(c));
  }

  accessorFor(hmac: string): string | undefined {
    return this.#byHmac.get(hmac);
  }

  close(): void {
    this.#unwatch();
  }

  #onChange(change: DocChange): void {
    const previous = change.previous as StoredDoc<StoredOneTimeToken> | undefined;
    const current = change.current as StoredDoc<StoredOneTimeToken> | undefined;
    if (previous) this.#byHmac.delete(previous.doc.SecretHmac);
    if (current) this.#byHmac.set(current.doc.SecretHmac, current.id);
  }
}

/** The commit writes that remove a token's one-time token, if it has one (for token deletes). */
export function oneTimeTokenRemoval(ctx: AppContext, accessorId: string) {
  return ctx.data.store.get(oneTimeCollection, accessorId)
    ? [{ collection: oneTimeCollection, id: accessorId, doc: null }]
    : [];
}

export const oneTimeLock = (accessorId: string) => `${oneTimeCollection}/${accessorId}`;

export function createOneTimeTokenRoutes(
  ctx: AppContext,
  acl: AclState,
  ttlMs: number,
): { routes: Route[]; close(): void } {
  const { store, keys } = ctx.data;
  const index = new OneTimeIndex(ctx);

  async function issue(req: RequestContext): Promise<Response> {
    requireAclsEnabled(acl);
    const caller = acl.resolveCaller(req);
    if (caller.accessorId === "anonymous") throw permissionDenied();
    const accessorId = caller.accessorId;
    const secret = uuid();
    const expiresAt = rfc3339(Date.now() + ttlMs);
    const { result } = await store.transact([oneTimeLock(accessorId)], () => {
      if (!acl.tokenByAccessor(accessorId)) throw permissionDenied();
      return (commitIndex: number) => {
        const ott: StoredOneTimeToken = {
          AccessorID: accessorId,
          SecretHmac: keys.hmac(oneTimeHmacPurpose, secret),
          ExpiresAt: expiresAt,
          CreateIndex: commitIndex,
          ModifyIndex: commitIndex,
        };
        return { writes: [{ collection: oneTimeCollection, id: accessorId, doc: { ...ott } }], result: ott };
      };
    });
    return nomadJson(
      {
        OneTimeToken: {
          OneTimeSecretID: secret,
          AccessorID: result.AccessorID,
          ExpiresAt: result.ExpiresAt,
          CreateIndex: result.CreateIndex,
          ModifyIndex: result.ModifyIndex,
        },
        Index: result.ModifyIndex,
      },
      result.ModifyIndex,
      false,
    );
  }

  async function exchange(req: RequestContext): Promise<Response> {
    requireAclsEnabled(acl);
    const body = await decodeObjectBody(req);
    const secret = optionalString(
      "OneTimeTokenExchangeRequest",
      "OneTimeSecretID",
      bodyField(body, "OneTimeSecretID"),
    );
    if (!secret) throw permissionDenied();
    const hmac = keys.hmac(oneTimeHmacPurpose, secret);
    const accessorId = index.accessorFor(hmac);
    if (accessorId === undefined) throw permissionDenied();
    const { index: commitIndex, result: token } = await store.transact([oneTimeLock(accessorId)], () => {
      // Checked again under the lock: of two exchanges of one secret, only the first finds it.
      const ott = store.get<StoredOneTimeToken>(oneTimeCollection, accessorId)?.doc;
      if (!ott || ott.SecretHmac !== hmac || Date.parse(ott.ExpiresAt) <= Date.now()) {
        throw permissionDenied();
      }
      const token = acl.tokenByAccessor(accessorId);
      if (!token) throw permissionDenied();
      return { writes: [{ collection: oneTimeCollection, id: accessorId, doc: null }], result: token };
    });
    const rendered = renderToken(token, acl.openSecret(token), acl.roleLinks(token));
    return nomadJson({ Token: rendered, Index: commitIndex }, commitIndex, false);
  }

  return {
    routes: [
      { method: ["POST", "PUT"], path: "/v1/acl/token/onetime", handler: issue },
      { method: ["POST", "PUT"], path: "/v1/acl/token/onetime/exchange", handler: exchange },
      // Nomad answers other methods as a wrong method, not as a token whose accessor is "onetime".
      ...["/v1/acl/token/onetime", "/v1/acl/token/onetime/exchange"].map((path) => ({
        method: ["GET", "DELETE"],
        path,
        handler: () => {
          throw new ApiError(405, "Invalid method", { headers: { Allow: "PUT, POST" } });
        },
      })),
    ],
    close: () => index.close(),
  };
}
