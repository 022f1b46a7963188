// GET /v1/metrics (Nomad's path, docs/operations.md#metrics): the node's metrics in Prometheus text format with
// ?format=prometheus, else Nomad's JSON shape; for a management ACL token, the metrics token, or anyone when public.

import type { AppContext } from "../../lib/app.ts";
import { constantTimeEqual } from "../../lib/crypto.ts";
import { ApiError } from "../../lib/errors.ts";
import { json, type RequestContext } from "../../lib/http.ts";
import { prometheusContentType, renderNomadJson, renderPrometheus } from "../../lib/metrics/mod.ts";
import type { Route } from "../../lib/router.ts";
import { type AclState, permissionDenied } from "./acl_state.ts";
import { requestSecret } from "./caller.ts";

/**
 * Scrapes collected and rendered at once (the work: a walk of the registry, the text built). The body is that
 * rendered string, sent after the handler returns and the slot is free: a scraper that does not read keeps only
 * its own body, until its connection closes (connections are capped by WHARF_MAX_CONNECTIONS).
 */
const maxConcurrentScrapes = 4;

export function createMetricsRoutes(ctx: AppContext, acl: AclState): Route[] {
  const { metricsToken, metricsPublic } = ctx.config;
  let scraping = 0;

  /** Throws 401 without credentials, 403 for credentials that may not read metrics. */
  const authorize = (req: RequestContext): void => {
    if (metricsPublic) return;
    const secret = requestSecret(req.request);
    if (secret === undefined) {
      throw new ApiError(401, "Permission denied: a management token or the metrics token is required", {
        headers: { "WWW-Authenticate": 'Bearer realm="wharf metrics"' },
      });
    }
    if (metricsToken !== undefined && constantTimeEqual(secret, metricsToken)) return;
    // A management token of the ACL system, checked as every management-only Nomad endpoint checks it (unknown,
    // expired, not management: the same 403s); never "ACLs off": without ACLs only the metrics token reads.
    if (!acl.enabled) throw permissionDenied();
    acl.requireManagement(req);
  };

  const handler = async (req: RequestContext): Promise<Response> => {
    authorize(req);
    const format = req.url.searchParams.get("format");
    if (format !== null && format !== "prometheus") {
      throw new ApiError(400, 'format must be "prometheus" or absent (Nomad\'s JSON)');
    }
    if (scraping >= maxConcurrentScrapes) {
      throw new ApiError(429, "Too many concurrent metrics requests", { headers: { "Retry-After": "1" } });
    }
    scraping++;
    try {
      const families = await ctx.metrics.collect();
      if (format === null) return json(renderNomadJson(families));
      return new Response(renderPrometheus(families), { headers: { "Content-Type": prometheusContentType } });
    } finally {
      scraping--;
    }
  };
  return [{ method: "GET", path: "/v1/metrics", handler }];
}
