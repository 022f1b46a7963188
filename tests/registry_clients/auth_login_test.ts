// `vagrant cloud auth login` against wharf in a pseudo-terminal: password login stores a working token,
// bad credentials and bad tokens end the CLI with the server's message, and a two-factor user gets in
// through a token made over the API (docs/registry.md#getting-a-token).

import * as OTPAuth from "otpauth";
import { assert, assertEquals, assertStringIncludes } from "../helpers/assert.ts";
import { describeRun, explainSkip, vagrantMissing, VagrantSandbox } from "./clients.ts";
import { ALICE_PASSWORD, withClientServer } from "./registry_api.ts";

const scriptMissing = async () => {
  try {
    const out = await new Deno.Command("script", { args: ["--version"], stdout: "null", stderr: "null" })
      .output();
    return out.code === 0 ? undefined : "util-linux `script` (pseudo-terminal) is not available";
  } catch {
    return "util-linux `script` (pseudo-terminal) is not available";
  }
};
const skip = explainSkip("vagrant auth login tests", (await vagrantMissing()) ?? (await scriptMissing()));

const passwordPrompt = /Password \(will be hidden\):/;
const descriptionPrompt = /Token description \(Defaults to/;

Deno.test({
  name: "vagrant cloud auth login stores a wharf token when the password is typed in a terminal",
  ignore: skip,
  fn: (t) =>
    withClientServer((url) => VagrantSandbox.create(url), async (server, sandbox, { api, adminToken }) => {
      await t.step("a wrong password exits non-zero with the server's message", async () => {
        const login = await sandbox.vagrantInTerminal(["cloud", "auth", "login", "-u", "alice"], [
          { after: passwordPrompt, type: "not-the-password" },
          { after: descriptionPrompt, type: "" },
        ]);
        assert(login.code !== 0, describeRun("vagrant cloud auth login (bad password)", login));
        assertStringIncludes(login.output, "Invalid login or password!");
        assertEquals(await sandbox.storedLoginToken(), undefined);
      });

      await t.step("the right password stores a token that whoami accepts", async () => {
        const login = await sandbox.vagrantInTerminal(["cloud", "auth", "login", "-u", "alice"], [
          { after: passwordPrompt, type: ALICE_PASSWORD },
          { after: descriptionPrompt, type: "vagrant cli test" },
        ]);
        assertEquals(login.code, 0, describeRun("vagrant cloud auth login", login));
        assertStringIncludes(login.output, "You are now logged in.");
        const token = await sandbox.storedLoginToken();
        assert(token?.startsWith("wharf_"), `stored token: ${token}`);
        const whoami = await sandbox.vagrant(["cloud", "auth", "whoami"]);
        assertStringIncludes(whoami.output, "Currently logged in as alice", describeRun("whoami", whoami));
        const tokens = await api.expectOk("GET", "/api/v1/admin/users/alice/tokens", { token: adminToken });
        const descriptions = (tokens.tokens as Array<{ description: string }>).map((t) => t.description);
        assert(descriptions.includes("vagrant cli test"), `token descriptions: ${descriptions}`);
      });

      await t.step("login --token with a revoked token exits non-zero naming the bad token", async () => {
        const revoked = await api.login("alice", ALICE_PASSWORD, "to revoke");
        const gone = await api.call("DELETE", "/api/v1/authenticate", { token: revoked });
        assertEquals(gone.status, 204);
        const login = await sandbox.vagrant(["cloud", "auth", "login", "--token", revoked]);
        assert(login.code !== 0, describeRun("vagrant cloud auth login --token (revoked)", login));
        assertStringIncludes(login.output, "Bad access token!");
      });

      await t.step(
        "a two-factor user is refused with the server's message, then logs in by token",
        async () => {
          await api.createUser(adminToken, "carol", "carol-password-1");
          const enrol = await api.expectOk("POST", "/api/v1/admin/users/carol/totp", { token: adminToken });
          const totp = new OTPAuth.TOTP({ secret: OTPAuth.Secret.fromBase32(String(enrol.secret)) });
          await api.expectOk("POST", "/api/v1/admin/users/carol/totp/confirm", {
            token: adminToken,
            body: { code: totp.generate() },
          });
          await api.expectOk("PUT", "/api/v1/admin/users/carol", {
            token: adminToken,
            body: { user: { two_factor_enabled: true } },
          });
          const carol = await VagrantSandbox.create(server.url);
          try {
            const login = await carol.vagrantInTerminal(["cloud", "auth", "login", "-u", "carol"], [
              { after: passwordPrompt, type: "carol-password-1" },
              { after: descriptionPrompt, type: "" },
            ]);
            assert(login.code !== 0, describeRun("vagrant cloud auth login (two-factor)", login));
            assertStringIncludes(login.output, "Two-factor authentication code required!");
            // The confirmation used the current 30 s step; the next step's code is inside the accepted window.
            const code = totp.generate({ timestamp: Date.now() + 30_000 });
            const token = await api.expectOk("POST", "/api/v1/authenticate", {
              body: { user: { login: "carol", password: "carol-password-1" }, two_factor: { code } },
            });
            const byToken = await carol.vagrant(["cloud", "auth", "login", "--token", String(token.token)]);
            assertEquals(byToken.code, 0, describeRun("vagrant cloud auth login --token (carol)", byToken));
            const whoami = await carol.vagrant(["cloud", "auth", "whoami"]);
            assertStringIncludes(
              whoami.output,
              "Currently logged in as carol",
              describeRun("whoami", whoami),
            );
          } finally {
            await carol.remove();
          }
        },
      );
    }),
});
