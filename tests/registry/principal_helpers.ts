// Helpers for the service-principal tests: creating a principal through the admin API and asking
// POST /oauth2/token for a token with a form body or HTTP Basic.

import { assertEquals } from "../helpers/assert.ts";
import type { Answer, Fixture } from "./helpers.ts";

export interface CreatedPrincipal {
  name: string;
  client_id: string;
  client_secret: string;
  created_at: string;
}

export const spPath = (org: string) => `/api/v1/admin/organizations/${org}/service-principals`;

export async function createPrincipal(f: Fixture, org: string, name: string, token = f.admin) {
  const a = await f.api.post(spPath(org), { service_principal: { name } }, { token });
  assertEquals(a.status, 201, a.text);
  return a.body as CreatedPrincipal;
}

export interface TokenRequest {
  /** The form body, encoded here; a string is sent as is. */
  form?: Record<string, string> | string;
  /** HTTP Basic credentials [id, secret]. */
  basic?: [string, string];
  headers?: Record<string, string>;
  method?: string;
  query?: string;
}

export function basicHeader(id: string, secret: string): string {
  return `Basic ${btoa(`${encodeURIComponent(id)}:${encodeURIComponent(secret)}`)}`;
}

export function tokenCall(f: Fixture, request: TokenRequest): Promise<Answer> {
  const headers: Record<string, string> = {
    "Content-Type": "application/x-www-form-urlencoded",
    ...request.headers,
  };
  if (request.basic) headers.Authorization = basicHeader(...request.basic);
  const form = request.form ?? {};
  const raw = typeof form === "string" ? form : new URLSearchParams(form).toString();
  return f.api.call(request.method ?? "POST", `/oauth2/token${request.query ?? ""}`, {
    headers,
    ...(request.method === "GET" || request.method === "HEAD" ? {} : { raw }),
  });
}

/** A token for the principal (form body), checked to be a 200. */
export async function principalToken(f: Fixture, p: CreatedPrincipal): Promise<string> {
  const a = await tokenCall(f, {
    form: { grant_type: "client_credentials", client_id: p.client_id, client_secret: p.client_secret },
  });
  assertEquals(a.status, 200, a.text);
  return a.body.access_token as string;
}
