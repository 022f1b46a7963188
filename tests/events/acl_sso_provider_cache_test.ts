// Unit test of the Nomad SSO provider cache's bound (routes/events/acl_sso_keys.ts): a deleted auth method's
// entry is dropped, so the cache holds at most one entry per existing method (docs/security.md#openid-providers).

import { assertEquals } from "../helpers/assert.ts";
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
function oidcMethod(name: string, index: number): StoredAuthMethod {
  return {
    Name: name,
    Type: "OIDC",
    TokenLocality: "local",
    TokenNameFormat: "${auth_method_type}-${auth_method_name}",
    MaxTokenTTLNs: 3600e9,
    Default: false,
    Config: { OIDCDiscoveryURL: "http://127.0.0.1:9/op" } as StoredAuthMethod["Config"],
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
