// A CI pipeline with only HCP_CLIENT_ID, HCP_CLIENT_SECRET, HCP_AUTH_URL and VAGRANT_SERVER_URL set
// (docs/registry.md#service-principals-for-ci): the vagrant_cloud gem 3.1.3 gets a client-credentials token from
// wharf's /oauth2/token by itself, and upstream Vagrant 2.4.9 publishes with it; once the principal is deleted its
// token and secret are refused.

import { assert, assertEquals, assertStringIncludes } from "../helpers/assert.ts";
import { buildBoxFile, cmd, describeRun, explainSkip, runRuby } from "./clients.ts";
import { withClientServer } from "./registry_api.ts";
import { sandbox24, SHARED_DIR, vagrant24Missing } from "./vagrant24.ts";

const gemLib = `${SHARED_DIR}clients/vagrant_cloud-3.1.3/lib`;

/** Why these tests cannot run here: Vagrant 2.4.9 cannot (no ../shared, no Ruby), or the gem lacks OAuth2. */
async function missing(): Promise<string | undefined> {
  const vagrant = await vagrant24Missing();
  if (vagrant) return vagrant;
  const probe = await runRuby('require "oauth2"; print :ok', {});
  if (probe.code !== 0) {
    return "ruby-oauth2 (the OAuth2 client of the vagrant_cloud 3.1 gem) is not installed";
  }
  return undefined;
}

const publishFlags = ["--architecture", "amd64", "--release", "--force"];
const skip = explainSkip("Vagrant 2.4.9 / gem 3.1.3 service-principal tests", await missing());

/** Asks the gem to validate its token (it first gets one from HCP_AUTH_URL); prints token and answer. */
const gemScript = `
require "json"
require "vagrant_cloud"
client = VagrantCloud::Client.new(url_base: ENV.fetch("VAGRANT_SERVER_URL"))
begin
  answer = client.authentication_token_validate
  puts JSON.dump({ token: client.access_token, answer: answer })
rescue Exception => e
  puts JSON.dump({ error: e.class.name, message: e.message })
end
`;

Deno.test({
  name: "a pipeline with only HCP client credentials publishes with Vagrant 2.4.9; a deleted one is refused",
  ignore: skip,
  fn: (t) =>
    withClientServer(sandbox24, async (server, sandbox, { api, adminToken }) => {
      const created = await api.expectOk("POST", "/api/v1/admin/organizations/acme/service-principals", {
        token: adminToken,
        body: { service_principal: { name: "pipeline" } },
      });
      const hcp = {
        HCP_CLIENT_ID: String(created.client_id),
        HCP_CLIENT_SECRET: String(created.client_secret),
        HCP_AUTH_URL: server.url,
        VAGRANT_SERVER_URL: server.url,
      };
      let gemToken = "";

      await t.step(
        "the gem gets a token from /oauth2/token and /api/v2/authenticate names the org",
        async () => {
          const run = await runRuby(`$LOAD_PATH.unshift(${JSON.stringify(gemLib)})\n${gemScript}`, hcp);
          assertEquals(run.code, 0, describeRun("ruby", run));
          const result = JSON.parse(run.stdout.trim().split("\n").at(-1)!);
          assertEquals(result.answer, { user: { username: "acme" } }, run.output);
          gemToken = result.token;
          assert(gemToken.startsWith("wharf_"), run.output);
        },
      );

      await t.step("a wrong secret gets the gem no token", async () => {
        const wrong = { ...hcp, HCP_CLIENT_SECRET: "wharf_sp_wrong" };
        const run = await runRuby(`$LOAD_PATH.unshift(${JSON.stringify(gemLib)})\n${gemScript}`, wrong);
        const result = JSON.parse(run.stdout.trim().split("\n").at(-1)!);
        assertEquals(result.token, undefined, run.output);
        // The gem means to raise AuthenticationError with wharf's answer, but 3.1.3 passes its constructor
        // one argument of two, so every refusal surfaces as this ArgumentError (docs/registry.md says so).
        assert(
          ["VagrantCloud::Error::ClientError::AuthenticationError", "ArgumentError"].includes(result.error),
          run.output,
        );
        const answer = await fetch(`${server.url}/oauth2/token`, {
          method: "POST",
          headers: { "Content-Type": "application/x-www-form-urlencoded" },
          body: new URLSearchParams({
            grant_type: "client_credentials",
            client_id: wrong.HCP_CLIENT_ID,
            client_secret: wrong.HCP_CLIENT_SECRET,
          }),
        });
        assertEquals([answer.status, (await answer.json()).error], [401, "invalid_client"]);
      });

      await t.step("vagrant24 cloud publish with only the HCP variables", async () => {
        const file = await buildBoxFile(sandbox.workDir, "ci.box");
        const run = await sandbox.vagrant(
          cmd("cloud publish acme/cibox 1.0.0 virtualbox", file, ...publishFlags),
          hcp,
        );
        assertEquals(run.code, 0, describeRun("vagrant24 cloud publish", run));
        assertStringIncludes(run.output, "Complete! Published acme/cibox");
        const box = await api.expectOk("GET", "/api/v2/box/acme/cibox", { token: adminToken }) as {
          current_version: {
            version: string;
            providers: Array<{ name: string; architecture: string; hosted: boolean }>;
          };
        };
        assertEquals(box.current_version.version, "1.0.0");
        const [provider] = box.current_version.providers;
        assertEquals([provider?.name, provider?.architecture, provider?.hosted], [
          "virtualbox",
          "amd64",
          true,
        ]);
        assert(!(await sandbox.storedLoginToken()), "the pipeline never logged in");
      });

      await t.step("deleting the principal revokes the token it got; the pipeline then fails", async () => {
        await api.expectOk(
          "DELETE",
          `/api/v1/admin/organizations/acme/service-principals/${created.client_id}`,
          {
            token: adminToken,
          },
        );
        const check = await fetch(`${server.url}/api/v2/authenticate`, {
          headers: { Authorization: `Bearer ${gemToken}` },
        });
        assertEquals(check.status, 401, await check.text());
        const file = await buildBoxFile(sandbox.workDir, "ci2.box");
        const run = await sandbox.vagrant(
          cmd("cloud publish acme/cibox 1.1.0 virtualbox", file, ...publishFlags),
          hcp,
        );
        assert(run.code !== 0, describeRun("vagrant24 cloud publish after the delete", run));
        const box = await api.expectOk("GET", "/api/v2/box/acme/cibox", { token: adminToken }) as {
          versions: Array<{ version: string }>;
        };
        assertEquals(box.versions.map((v) => v.version), ["1.0.0"]);
      });
    }),
});
