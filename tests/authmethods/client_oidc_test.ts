// The OIDC client (discovery validation, auth URL, code exchange) against a real oidc-provider, browser-less.

import { assert, assertEquals, assertMatch, assertRejects } from "../helpers/assert.ts";
import {
  buildAuthUrl,
  exchangeCode,
  type OidcMethodAttributes,
  pkceChallenge,
  validateDiscoveredConfig,
} from "../../routes/authmethods/login/oidc_client.ts";
import {
  type OidcProviderFixture,
  oidcUsers,
  startOidcProvider,
  wharfMethodAttributes,
} from "../fixtures/oidc_provider.ts";
import { completeProviderLogin } from "../fixtures/oidc_browser.ts";
import { opensslAvailable } from "../fixtures/tls_certs.ts";

const apiUrlPrefix = "http://127.0.0.1:9";
const redirectUri = `${apiUrlPrefix}/v1/auth-methods/oidc:authenticate:callback`;

function methodFor(op: OidcProviderFixture, extra: Partial<OidcMethodAttributes> = {}): OidcMethodAttributes {
  return {
    ...wharfMethodAttributes(op, apiUrlPrefix),
    claims_scopes: ["email", "profile", "groups"],
    ...(op.pki ? { idp_ca_certs: [op.pki.caPem] } : {}),
    ...extra,
  };
}

interface Attempt {
  state: string;
  nonce: string;
  codeVerifier: string;
  authUrl: string;
}

async function newAttempt(attrs: OidcMethodAttributes): Promise<Attempt> {
  const state = crypto.randomUUID();
  const nonce = crypto.randomUUID();
  const codeVerifier = `${crypto.randomUUID()}-${crypto.randomUUID()}`;
  const authUrl = await buildAuthUrl(attrs, {
    state,
    nonce,
    codeChallenge: await pkceChallenge(codeVerifier),
    redirectUri,
  });
  return { state, nonce, codeVerifier, authUrl };
}

/** Runs the browser part and returns the code delivered to the callback. */
async function loginAt(attempt: Attempt, user = oidcUsers.alice, caPem?: string): Promise<string> {
  const { callbackUrl } = await completeProviderLogin(attempt.authUrl, {
    login: user.login,
    password: user.password,
    ...(caPem ? { caPem } : {}),
  });
  assertEquals(callbackUrl.origin + callbackUrl.pathname, redirectUri);
  assertEquals(callbackUrl.searchParams.get("state"), attempt.state);
  const code = callbackUrl.searchParams.get("code");
  assert(code, `no code in ${callbackUrl}`);
  return code;
}

/** Starts an attempt under `startAttrs`, logs `user` in at the provider and exchanges the code under `exchangeAttrs`. */
async function loginAndExchange(
  startAttrs: OidcMethodAttributes,
  exchangeAttrs = startAttrs,
  user = oidcUsers.alice,
  caPem?: string,
) {
  const attempt = await newAttempt(startAttrs);
  const code = await loginAt(attempt, user, caPem);
  return await exchangeCode(exchangeAttrs, { code, ...attempt, redirectUri });
}

Deno.test("OIDC client completes the code flow against a real provider and validates the ID token", async (t) => {
  const op = await startOidcProvider({ redirectUris: [redirectUri] });
  try {
    const attrs = methodFor(op);

    await t.step("discovery validation passes when the configuration matches the provider", async () => {
      assertEquals(await validateDiscoveredConfig(attrs), []);
    });

    await t.step("the auth URL carries every parameter of an authorization request", async () => {
      const attempt = await newAttempt({ ...attrs, max_age: 0, prompts: ["login", "consent"] });
      const url = new URL(attempt.authUrl);
      assertEquals(url.origin, op.issuer);
      const p = Object.fromEntries(url.searchParams);
      assertEquals(p.response_type, "code");
      assertEquals(p.client_id, op.clientId);
      assertEquals(p.redirect_uri, redirectUri);
      assertEquals(p.scope, "openid email profile groups");
      assertEquals(p.state, attempt.state);
      assertEquals(p.nonce, attempt.nonce);
      assertEquals(p.max_age, "0");
      assertEquals(p.prompt, "login consent");
      assertEquals(p.code_challenge_method, "S256");
      assertEquals(p.code_challenge, await pkceChallenge(attempt.codeVerifier));
      assert(!("client_secret" in p));
    });

    await t.step("login, consent, code exchange: claims come from the ID token and userinfo", async () => {
      const attempt = await newAttempt(attrs);
      const code = await loginAt(attempt);
      const result = await exchangeCode(attrs, { code, ...attempt, redirectUri });
      if (!result.ok) throw new Error(`${result.reason}: ${result.message}`);
      assertEquals(result.claims.sub, oidcUsers.alice.sub);
      assertEquals(result.claims.iss, op.issuer);
      assertEquals(result.claims.email, oidcUsers.alice.email);
      assertEquals(result.claims.name, oidcUsers.alice.name);
      assertEquals(result.claims.groups, oidcUsers.alice.groups);
      assertEquals(result.claims.nonce, attempt.nonce);
    });

    await t.step("a code cannot be redeemed twice", async () => {
      const attempt = await newAttempt(attrs);
      const code = await loginAt(attempt, oidcUsers.bob);
      const first = await exchangeCode(attrs, { code, ...attempt, redirectUri });
      assert(first.ok);
      const second = await exchangeCode(attrs, { code, ...attempt, redirectUri });
      assertEquals(second.ok ? "ok" : second.reason, "idp_error");
    });

    await t.step("a wrong PKCE verifier is refused by the token endpoint (idp_error)", async () => {
      const attempt = await newAttempt(attrs);
      const code = await loginAt(attempt);
      const r = await exchangeCode(attrs, {
        code,
        ...attempt,
        codeVerifier: `${attempt.codeVerifier}x`,
        redirectUri,
      });
      if (r.ok) throw new Error("expected failure");
      assertEquals(r.reason, "idp_error");
      assertMatch(r.message, /invalid_grant/);
    });

    await t.step("a nonce that is not the attempt's fails token validation", async () => {
      const attempt = await newAttempt(attrs);
      const code = await loginAt(attempt);
      const r = await exchangeCode(attrs, { code, ...attempt, nonce: "someone-elses-nonce", redirectUri });
      assertEquals(r.ok ? "ok" : r.reason, "token_validation_failed");
    });

    await t.step("allowed_audiences without our audience fails token validation", async () => {
      const r = await loginAndExchange(attrs, { ...attrs, allowed_audiences: ["some-other-api"] });
      assertEquals(r.ok ? "ok" : r.reason, "token_validation_failed");
      const ok = await loginAndExchange(attrs, {
        ...attrs,
        allowed_audiences: ["some-other-api", op.clientId],
      });
      assert(ok.ok);
    });

    await t.step("max_age makes auth_time required and accepted when fresh", async () => {
      const withMaxAge = { ...attrs, max_age: 300 };
      const r = await loginAndExchange(withMaxAge);
      if (!r.ok) throw new Error(`${r.reason}: ${r.message}`);
      assertEquals(typeof r.claims.auth_time, "number");
    });

    await t.step("denied consent comes back to the callback as error=access_denied", async () => {
      const attempt = await newAttempt(attrs);
      const { callbackUrl } = await completeProviderLogin(attempt.authUrl, {
        login: oidcUsers.alice.login,
        password: oidcUsers.alice.password,
        deny: true,
      });
      assertEquals(callbackUrl.searchParams.get("error"), "access_denied");
      assertEquals(callbackUrl.searchParams.get("state"), attempt.state);
    });

    await t.step(
      "signing_algorithms the provider does not offer fail validation and the exchange",
      async () => {
        const reasons = await validateDiscoveredConfig({ ...attrs, signing_algorithms: ["RS256", "ES512"] });
        assertEquals(reasons.length, 1);
        assertMatch(reasons[0]!, /ES512/);
        const r = await loginAndExchange(attrs, { ...attrs, signing_algorithms: ["ES512"] });
        assertEquals(r.ok ? "ok" : r.reason, "token_validation_failed");
      },
    );

    await t.step("a provider advertising another issuer fails validation, start and exchange", async () => {
      op.advertiseIssuer("https://impostor.example.com");
      try {
        const reasons = await validateDiscoveredConfig(attrs);
        assertEquals(reasons.length, 1);
        assertMatch(reasons[0]!, /issuer mismatch/);
        await assertRejects(() => newAttempt(attrs));
        const r = await exchangeCode(attrs, { code: "x", codeVerifier: "y", nonce: "z", redirectUri });
        assertEquals(r.ok ? "ok" : r.reason, "idp_error");
      } finally {
        op.advertiseIssuer(undefined);
      }
    });

    await t.step("an issuer with no provider behind it gives one discovery reason", async () => {
      const reasons = await validateDiscoveredConfig({ ...attrs, issuer: `${op.issuer}/nothing-here` });
      assertEquals(reasons.length, 1);
      assertMatch(reasons[0]!, /discovery failed: .*HTTP 404/);
    });
  } finally {
    await op.stop();
  }
});

Deno.test({
  name: "OIDC client trusts idp_ca_certs for an HTTPS provider signing with ES256",
  ignore: !opensslAvailable(),
  fn: async (t) => {
    const op = await startOidcProvider({ redirectUris: [redirectUri], tls: true, signingAlg: "ES256" });
    try {
      const attrs = methodFor(op);
      assert(op.issuer.startsWith("https://"));

      await t.step("discovery validation passes with the provider's CA", async () => {
        assertEquals(await validateDiscoveredConfig(attrs), []);
      });

      await t.step("without the CA, discovery fails on the certificate", async () => {
        const { idp_ca_certs: _dropped, ...noCa } = attrs;
        const reasons = await validateDiscoveredConfig(noCa);
        assertEquals(reasons.length, 1);
        assertMatch(reasons[0]!, /discovery failed/);
      });

      await t.step("the full flow works over HTTPS with ES256 ID tokens", async () => {
        const r = await loginAndExchange(attrs, attrs, oidcUsers.bob, op.pki!.caPem);
        if (!r.ok) throw new Error(`${r.reason}: ${r.message}`);
        assertEquals(r.claims.sub, oidcUsers.bob.sub);
        assertEquals(r.claims.email, oidcUsers.bob.email);
      });

      await t.step("RS256-only configuration refuses the provider's ES256 tokens", async () => {
        const reasons = await validateDiscoveredConfig({ ...attrs, signing_algorithms: ["RS256"] });
        assertEquals(reasons.length, 1);
      });
    } finally {
      await op.stop();
    }
  },
});

Deno.test("OIDC client uses client_secret_post when the provider offers only that", async () => {
  const op = await startOidcProvider({
    redirectUris: [redirectUri],
    tokenEndpointAuthMethod: "client_secret_post",
  });
  try {
    const attrs = methodFor(op);
    const r = await loginAndExchange(attrs);
    if (!r.ok) throw new Error(`${r.reason}: ${r.message}`);
    assertEquals(r.claims.sub, oidcUsers.alice.sub);
  } finally {
    await op.stop();
  }
});
