// The Nomad-shaped family (/v1/...): agent health, the ACL API, the event stream, publishing, nodes and jobs.

import type { ApiModule, AppContext } from "../../lib/app.ts";
import { jsonText } from "../../lib/http.ts";
import { eventsFamily } from "./family.ts";
import { AclState } from "./acl_state.ts";
import { compileAcl, type ParsedPolicy, parsePolicy, renderRulesJson } from "./policy.ts";
import { createAclTokenRoutes } from "./acl_tokens.ts";
import { createAclPolicyRoutes } from "./acl_policies.ts";
import { SsoState } from "./acl_sso_state.ts";
import { createAclAuthMethodRoutes } from "./acl_auth_methods.ts";
import { createAclBindingRuleRoutes } from "./acl_binding_rules.ts";
import { ProviderCache } from "./acl_sso_keys.ts";
import { createAclLoginRoutes } from "./acl_sso_login.ts";
import { createAclOidcRoutes } from "./acl_sso_oidc.ts";
import { createAclRoleRoutes } from "./acl_roles.ts";
import { createOneTimeTokenRoutes } from "./acl_onetime.ts";
import { TokenGc } from "./acl_token_gc.ts";
import { bootstrapAclAtStart, createBootstrapRoutes } from "./acl_bootstrap.ts";
import { createEventStream } from "./stream.ts";
import { createPublishRoutes } from "./publish.ts";
import { loadEventsSettings } from "./settings.ts";
import { nodeRoutes } from "./nodes.ts";
import { jobRoutes } from "./jobs.ts";
import { createMetricsRoutes } from "./metrics.ts";

/** The agent health answer never changes while the server runs: serialized once. */
const agentHealthBody = JSON.stringify({ server: { ok: true, message: "ok" } });

export async function createEventsApi(ctx: AppContext): Promise<ApiModule> {
  const settings = loadEventsSettings(ctx);
  const acl = new AclState(ctx, settings.aclEnabled, {
    parse: parsePolicy,
    rulesJson: (p) => renderRulesJson(p as ParsedPolicy),
    compile: (ps) => compileAcl(ps as ParsedPolicy[]),
  });
  if (settings.aclEnabled && settings.bootstrapSecret) {
    await bootstrapAclAtStart(ctx, settings.bootstrapSecret);
  }
  const sso = new SsoState(ctx);
  const providers = new ProviderCache(ctx.logger, sso);
  const oidc = createAclOidcRoutes(ctx, acl, sso, providers, settings.oidcStartsPerMinute);
  const ttlBounds = { minTtlMs: settings.tokenMinTtlMs, maxTtlMs: settings.tokenMaxTtlMs };
  const stream = createEventStream(ctx, acl, settings);
  const oneTime = createOneTimeTokenRoutes(ctx, acl, settings.oneTimeTokenTtlMs);
  // Nomad collects expired tokens only with ACLs on.
  const tokenGc = settings.aclEnabled ? new TokenGc(ctx, acl, settings.tokenGc) : undefined;
  const resolveCaller = acl.resolveCaller.bind(acl);
  const nodes = nodeRoutes(ctx, resolveCaller);
  const jobs = jobRoutes(ctx, resolveCaller);
  return {
    family: eventsFamily,
    routes: [
      {
        method: "GET",
        path: "/v1/agent/health",
        handler: () => jsonText(agentHealthBody),
      },
      ...stream.routes,
      ...createPublishRoutes(ctx, acl),
      ...createBootstrapRoutes(ctx, acl),
      // Before the token routes, so /v1/acl/token/onetime is never read as an accessor.
      ...oneTime.routes,
      ...createAclTokenRoutes(ctx, acl, {
        minTtlMs: settings.tokenMinTtlMs,
        maxTtlMs: settings.tokenMaxTtlMs,
      }),
      ...createAclPolicyRoutes(ctx, acl),
      ...createAclAuthMethodRoutes(ctx, acl, sso, ttlBounds),
      ...createAclBindingRuleRoutes(ctx, acl, sso),
      ...createAclLoginRoutes(ctx, acl, sso, providers),
      ...oidc.routes,
      ...createAclRoleRoutes(ctx, acl),
      ...nodes.routes,
      ...jobs.routes,
      ...createMetricsRoutes(ctx, acl),
    ],
    close() {
      stream.close();
      tokenGc?.close();
      oneTime.close();
      acl.close();
      sso.close();
      providers.close();
      oidc.requests.close();
      nodes.close?.();
      jobs.close?.();
    },
  };
}
