// Hostile-traffic properties both family suites run with their own endpoints and credentials: any request,
// hostile ids, odd methods and malformed bodies must each be refused (and, through `send`, never be a 5xx).

import fc from "fast-check";
import { assert } from "../helpers/assert.ts";
import { anyRequest, fillPath, hostileIdRequest } from "./arbitraries.ts";
import { runs, seed, send } from "./check.ts";
import { type Endpoint, oddMethods } from "./targets.ts";

/**
 * Any request (valid or hostile path, any body, sometimes an odd method) with one of `credentials`: those that
 * `mustRefuse` names must be answered ≥ 400; the failure message starts with `what`.
 */
export async function assertUnauthorisedRefused(
  url: string,
  endpoints: readonly Endpoint[],
  valid: Record<string, string>,
  credentials: fc.Arbitrary<Record<string, string>>,
  mustRefuse: (method: string, path: string) => boolean,
  what: string,
): Promise<void> {
  await fc.assert(
    fc.asyncProperty(anyRequest(endpoints, valid, credentials), async (r) => {
      const method = r.odd ?? r.endpoint.method;
      const response = await send(url, method, r.path, r.credentials, r.body);
      if (mustRefuse(method, r.path)) {
        assert(response.status >= 400, `${what}: ${method} ${r.path} → ${response.status}`);
      }
    }),
    { numRuns: runs * 3, seed },
  );
}

/** Requests with a hostile id in the path and `headers`: each is refused unless `acceptable` allows its answer. */
export async function assertHostileIdsRefused(
  url: string,
  endpoints: readonly Endpoint[],
  valid: Record<string, string>,
  headers: Record<string, string>,
  acceptable: (endpoint: Endpoint, status: number) => boolean = () => false,
): Promise<void> {
  await fc.assert(
    fc.asyncProperty(hostileIdRequest(endpoints, valid), async ({ endpoint, path, body }) => {
      const r = await send(url, endpoint.method, path, headers, body);
      assert(
        r.status >= 400 || acceptable(endpoint, r.status),
        `hostile id accepted: ${endpoint.method} ${path} → ${r.status}`,
      );
    }),
    { numRuns: runs * 2, seed },
  );
}

/** Every method an endpoint path does not declare, with `headers` and a `{}` body: each answer must be `refused`. */
export async function assertOddMethodsRefused(
  url: string,
  endpoints: readonly Endpoint[],
  valid: Record<string, string>,
  headers: Record<string, string>,
  refused: (status: number) => boolean,
): Promise<void> {
  for (const template of new Set(endpoints.map((e) => e.template))) {
    for (const method of oddMethods(template, endpoints)) {
      const r = await send(url, method, fillPath(template, valid), headers, "{}");
      assert(refused(r.status), `odd method: ${method} ${template} → ${r.status}`);
    }
  }
}

/** Writes to `endpoints` with one of `bodies` (malformed, huge, deep…) and `headers`: each must be refused. */
export async function assertBadBodiesRefused(
  url: string,
  endpoints: readonly Endpoint[],
  valid: Record<string, string>,
  headers: Record<string, string>,
  bodies: fc.Arbitrary<Uint8Array>,
): Promise<void> {
  const request = fc.record({ endpoint: fc.constantFrom(...endpoints), body: bodies });
  await fc.assert(
    fc.asyncProperty(request, async ({ endpoint, body }) => {
      const path = fillPath(endpoint.template, valid);
      const r = await send(url, endpoint.method, path, headers, body);
      assert(r.status >= 400, `bad body accepted: ${endpoint.method} ${path} → ${r.status}`);
    }),
    { numRuns: runs * 2, seed },
  );
}
