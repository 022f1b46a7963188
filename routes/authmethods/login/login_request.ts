// What every login type receives from the :authenticate dispatcher (authenticate.ts), and the one answer a
// failed login gets whatever failed.

import { ApiError } from "../../../lib/errors.ts";
import type { RequestContext } from "../../../lib/http.ts";
import type { DocWrite } from "../../../lib/store/mod.ts";
import type { AuthService } from "../service.ts";
import type { MethodDoc } from "../state.ts";

export interface AuthRequest {
  id: string;
  method: MethodDoc;
  command: string | undefined;
  /** "token" or "cookie" (lowercased); `typeEcho` is what to echo back when the client sent one. */
  delivery: "token" | "cookie";
  typeEcho: string | undefined;
  attributes: Record<string, unknown>;
}

export const unableToAuthenticate = () => new ApiError(401, "Unable to authenticate.");

/** A login by name and password (the password and LDAP types): the answer that delivers the issued token. */
export type CredentialLogin = (
  svc: AuthService,
  ctx: RequestContext,
  req: AuthRequest,
  loginName: string,
  password: string,
) => Promise<Response>;

/** What a login's commit resolves under its locks: the account and user, and the writes that make or refresh them. */
export type LoginResolution = { userId: string; accountId: string; writes: DocWrite[] };

/** A credential check's outcome: why it failed, or the locks and resolution its commit takes. */
export type CredentialCheck =
  | { ok: false; reason: string }
  | { ok: true; locks: string[]; resolve: () => LoginResolution };
