// Admin API of the registry's identity settings (docs/identity.md): the sign-in methods.

import { json } from "../../../lib/http.ts";
import type { Req } from "./auth.ts";
import { readBodyObject } from "./body.ts";
import * as signIn from "../services/sign_in_methods.ts";

export function getSignInMethods(req: Req): Response {
  return json(signIn.getSignInMethods(req));
}

export async function putSignInMethods(req: Req): Promise<Response> {
  return json(await signIn.putSignInMethods(req, await readBodyObject(req)));
}
