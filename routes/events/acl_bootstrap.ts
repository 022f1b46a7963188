// ACL bootstrap: the first management token, once, by API or from WHARF_ACL_BOOTSTRAP_SECRET at start.

import type { AppContext } from "../../lib/app.ts";
import { ApiError } from "../../lib/errors.ts";
import type { RequestContext } from "../../lib/http.ts";
import type { Route } from "../../lib/router.ts";
import { uuid, uuidPattern } from "../../lib/ids.ts";
import { asApiError } from "../../lib/store_http.ts";
import {
  bodyField,
  metaCollection,
  renderToken,
  rfc3339,
  type StoredToken,
  tokenCollection,
} from "./acl_model.ts";
import type { AclState } from "./acl_state.ts";
import { decodeObjectBody, nomadJson, requireAclsEnabled } from "./acl_http.ts";
import { newStoredToken } from "./acl_tokens.ts";

const bootstrapId = "bootstrap";

/** Creates the bootstrap token with `secretId`, or throws 400 when bootstrap already happened. */
export async function bootstrapAcl(ctx: AppContext, secretId: string): Promise<StoredToken> {
  const { store } = ctx.data;
  const { result } = await store.transact([`${metaCollection}/${bootstrapId}`], () => {
    const done = store.get<{ ResetIndex: number }>(metaCollection, bootstrapId);
    if (done) throw new ApiError(400, `ACL bootstrap already done (reset index: ${done.doc.ResetIndex})`);
    return (index: number) => {
      const accessorId = uuid();
      const token = newStoredToken(ctx, {
        AccessorID: accessorId,
        Name: "Bootstrap Token",
        Type: "management",
        Policies: null,
        Global: true,
        CreateTime: rfc3339(Date.now()),
        ExpirationTime: null,
        ExpirationTTL: "",
        CreateIndex: index,
        ModifyIndex: index,
      }, secretId);
      // Bootstrap takes an Index but, as in Nomad, emits no event.
      return {
        writes: [
          { collection: tokenCollection, id: accessorId, doc: { ...token }, ifVersion: 0 },
          { collection: metaCollection, id: bootstrapId, doc: { ResetIndex: index }, ifVersion: 0 },
        ],
        events: [],
        result: token,
      };
    };
  });
  return result;
}

/** At start with WHARF_ACL_BOOTSTRAP_SECRET: bootstraps unless it happened already, on this node or another. */
export async function bootstrapAclAtStart(ctx: AppContext, secretId: string): Promise<void> {
  if (isBootstrapped(ctx)) return;
  try {
    await bootstrapAcl(ctx, secretId);
  } catch (err) {
    // Another node on the same database bootstrapped first: its token is the one (as on a restart).
    if (!(asApiError(err) && isBootstrapped(ctx))) throw err;
  }
}

export function isBootstrapped(ctx: AppContext): boolean {
  return ctx.data.store.get(metaCollection, bootstrapId) !== undefined;
}

export function createBootstrapRoutes(ctx: AppContext, acl: AclState): Route[] {
  async function bootstrap(req: RequestContext): Promise<Response> {
    requireAclsEnabled(acl);
    const body = await decodeObjectBody(req, true);
    const given = bodyField(body, "BootstrapSecret");
    if (given !== undefined && given !== null && given !== "") {
      if (typeof given !== "string" || !uuidPattern.test(given)) throw new ApiError(400, "invalid acl token");
    }
    const secretId = typeof given === "string" && given !== "" ? given : uuid();
    const token = await bootstrapAcl(ctx, secretId);
    return nomadJson(renderToken(token, secretId, null), token.ModifyIndex, false);
  }
  return [{ method: ["POST", "PUT"], path: "/v1/acl/bootstrap", handler: bootstrap }];
}
