// Unit test of the Nomad SSO provider cache's bound (routes/events/acl_sso_keys.ts): a deleted auth method's
// entry is dropped, and a login in flight when its method is deleted makes none again, so the cache holds at most
// one entry per existing method (docs/security.md#openid-providers).

import { assert, assertEquals, assertStringIncludes } from "../helpers/assert.ts";
import { withAppContext } from "../helpers/app_context.ts";
import { ProviderCache } from "../../routes/events/acl_sso_keys.ts";
import {
  authMethodCollection,
  authMethodEvent,
  type StoredAuthMethod,
} from "../../routes/events/acl_sso_model.ts";
import { ssoLock, SsoState } from "../../routes/events/acl_sso_state.ts";
import { upsertStep } from "../../routes/events/acl_sso_routes.ts";

const methods = 20;

/** A stored OIDC method `name` as the upsert writes it (the fields the cache reads; no provider is asked). */
function oidcMethod(name: string, index: number, discoveryUrl = "http://127.0.0.1:9/op"): StoredAuthMethod {
  return {
    Name: name,
    Type: "OIDC",
    TokenLocality: "local",
    TokenNameFormat: "${auth_method_type}-${auth_method_name}",
    MaxTokenTTLNs: 3600e9,
    Default: false,
    Config: { OIDCDiscoveryURL: discoveryUrl } as StoredAuthMethod["Config"],
    Hash: `hash-${name}`,
    CreateTime: new Date().toISOString(),
    ModifyTime: new Date().toISOString(),
    CreateIndex: index,
    ModifyIndex: index,
  };
}

Deno.test("Nomad SSO provider cache (unit): deleting auth methods drops their entries", () =>
  withAppContext({}, async (app) => {
    const { store } = app.data;
    const sso = new SsoState(app);
    const providers = new ProviderCache(undefined, sso);
    try {
      for (let i = 0; i < methods; i++) {
        const { result } = await store.transact([ssoLock], () => (index: number) => {
          const m = oidcMethod(`m${i}`, index);
          return upsertStep(authMethodCollection, m.Name, m, authMethodEvent("ACLAuthMethodUpserted", m));
        });
        providers.http(result); // what a login of the method makes first: its entry (no request is sent)
      }
      assertEquals(providers.size, methods);
      const deleted = (m: StoredAuthMethod) => authMethodEvent("ACLAuthMethodDeleted", m);
      for (let i = 0; i < methods; i++) {
        await sso.remove(authMethodCollection, `m${i}`, "ACL auth method not found", deleted);
      }
      assertEquals(providers.size, 0);
    } finally {
      providers.close();
      sso.close();
    }
  }));

Deno.test("Nomad SSO provider cache (unit): a login waiting for discovery when its method is deleted leaves no entry", () =>
  withAppContext({}, async (app) => {
    const { store } = app.data;
    const sso = new SsoState(app);
    const providers = new ProviderCache(undefined, sso);
    // A provider that answers discovery after 300 ms: the method is deleted while the login waits for it.
    let asked = 0;
    const provider = Deno.serve({ hostname: "127.0.0.1", port: 0, onListen() {} }, async (request) => {
      asked++;
      await new Promise((r) => setTimeout(r, 300));
      const issuer = new URL(request.url).origin + "/op";
      return Response.json({ issuer, jwks_uri: `${issuer}/keys` });
    });
    try {
      const { result: method } = await store.transact([ssoLock], () => (index: number) => {
        const m = oidcMethod("slow", index, `http://127.0.0.1:${provider.addr.port}/op`);
        return upsertStep(authMethodCollection, m.Name, m, authMethodEvent("ACLAuthMethodUpserted", m));
      });
      const login = providers.verifySignature(method, "a.b.c").then(() => "verified", (err) => String(err));
      while (asked === 0) await new Promise((r) => setTimeout(r, 10));
      assertEquals(providers.size, 1);
      const deleted = (m: StoredAuthMethod) => authMethodEvent("ACLAuthMethodDeleted", m);
      await sso.remove(authMethodCollection, "slow", "ACL auth method not found", deleted);
      assertEquals(providers.size, 0);
      const outcome = await login;
      assertEquals(providers.size, 0);
      assertStringIncludes(outcome, 'auth-method "slow" changed or was deleted during the login');
      assert(!outcome.includes("verified"));
    } finally {
      providers.close();
      sso.close();
      await provider.shutdown();
    }
  }));
