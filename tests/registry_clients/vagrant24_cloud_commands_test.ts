// The real Vagrant 2.4.9 CLI (vagrant_cloud gem 3.1.3, API v2) against wharf: password login in a terminal,
// whoami, box, version and provider commands with architectures, revoking a version, and a revoked token
// (docs/registry.md#vagrant-24).

import { assert, assertEquals, assertMatch, assertStringIncludes } from "../helpers/assert.ts";
import { cmd, describeRun, explainSkip } from "./clients.ts";
import { ALICE_PASSWORD, withClientServer } from "./registry_api.ts";
import { markedBox, sandbox24, vagrant24Missing } from "./vagrant24.ts";

const skip = explainSkip("Vagrant 2.4.9 cloud command tests", await vagrant24Missing());

interface V2Provider {
  name: string;
  architecture: string;
  default_architecture: boolean;
  hosted: boolean;
  url: string | null;
}

Deno.test({
  name: "Vagrant 2.4.9 logs in and manages boxes, versions and providers per architecture on wharf",
  ignore: skip,
  fn: (t) =>
    withClientServer(sandbox24, async (server, alice, { api, adminToken }) => {
      const v = (...args: string[]) => alice.vagrant(args);
      const ok = async (label: string, args: string[]) => {
        const run = await alice.vagrant(args);
        assertEquals(run.code, 0, describeRun(`vagrant ${label}`, run));
        return run.output;
      };
      const providers = async (version = "1.0.0") =>
        ((await api.expectOk("GET", `/api/v2/box/acme/tool/version/${version}`, { token: adminToken }))
          .providers as V2Provider[]).map((p) => `${p.architecture}${p.default_architecture ? "*" : ""}`);

      await t.step("auth login in a terminal stores a token; whoami checks it on /api/v2", async () => {
        const login = await alice.vagrantInTerminal(["cloud", "auth", "login", "--username", "alice"], [
          { after: /Password \(will be hidden\):/, type: ALICE_PASSWORD },
          { after: /Token description \(Defaults to/, type: "vagrant 2.4 test" },
        ]);
        assertEquals(login.code, 0, describeRun("vagrant cloud auth login", login));
        assertStringIncludes(login.output, "You are now logged in.");
        assert((await alice.storedLoginToken())?.startsWith("wharf_"));
        assertStringIncludes(
          await ok("cloud auth whoami", cmd("cloud auth whoami")),
          "Currently logged in as alice",
        );
      });

      await t.step("box create, update and show", async () => {
        const created = await ok(
          "cloud box create",
          cmd("cloud box create acme/tool -s short -d", "Long text"),
        );
        assertStringIncludes(created, "Created box acme/tool");
        await ok("cloud box update", cmd("cloud box update acme/tool -s shorter --no-private"));
        const box = await api.expectOk("GET", "/api/v2/box/acme/tool", { token: adminToken });
        assertEquals([box.short_description, box.description, box.private], ["shorter", "Long text", false]);
        assertMatch(await ok("cloud box show", cmd("cloud box show acme/tool")), /Description:\s+Long text/);
      });

      await t.step("version and provider commands with architectures", async () => {
        await ok("cloud version create", cmd("cloud version create acme/tool 1.0.0 -d first"));
        await ok("cloud version update", cmd("cloud version update acme/tool 1.0.0 -d", "first cut"));
        const amd = await ok(
          "cloud provider create (amd64)",
          cmd("cloud provider create acme/tool virtualbox 1.0.0 --architecture amd64 --default-architecture"),
        );
        assertMatch(amd, /Architecture:\s+amd64/);
        assertMatch(amd, /Default Architecture:\s+yes/);
        // The CLI sends default_architecture:false: a second architecture does not take the flag.
        await ok(
          "cloud provider create (i386, url)",
          cmd("cloud provider create acme/tool virtualbox 1.0.0 https://files.example.com/i386.box -a i386"),
        );
        assertEquals(await providers(), ["amd64*", "i386"]);
        await ok(
          "cloud provider update (i386 → arm64)",
          cmd("cloud provider update acme/tool virtualbox 1.0.0 i386 --architecture arm64"),
        );
        const file = await markedBox(alice.root, "arm64");
        const upload = await ok(
          "cloud provider upload (arm64)",
          cmd("cloud provider upload acme/tool virtualbox 1.0.0 arm64", file),
        );
        assertStringIncludes(upload, "Uploaded provider virtualbox on acme/tool for version 1.0.0");
        // Taking the default flag off amd64 passes it to arm64.
        await ok(
          "cloud provider update --no-default-architecture",
          cmd("cloud provider update acme/tool virtualbox 1.0.0 amd64 --no-default-architecture"),
        );
        assertEquals(await providers(), ["amd64", "arm64*"]);
        const version = await api.expectOk("GET", "/api/v2/box/acme/tool/version/1.0.0", {
          token: adminToken,
        });
        const arm = (version.providers as V2Provider[]).find((p) => p.architecture === "arm64")!;
        assertEquals([arm.hosted, arm.url], [true, null]);
        assertEquals(version.description, "first cut");
      });

      await t.step("version release and revoke, provider and version delete", async () => {
        await ok("cloud version release", cmd("cloud version release acme/tool 1.0.0 -f"));
        assertMatch(
          await ok("cloud box show", cmd("cloud box show acme/tool")),
          /Current Version:\s+1\.0\.0/,
        );
        const revoked = await ok("cloud version revoke", cmd("cloud version revoke acme/tool 1.0.0 -f"));
        assertStringIncludes(revoked, "Revoked version 1.0.0 on acme/tool");
        assertMatch(revoked, /Providers:\s+virtualbox \(amd64, arm64\)/);
        await ok("cloud provider delete", cmd("cloud provider delete acme/tool virtualbox 1.0.0 arm64 -f"));
        assertEquals(await providers(), ["amd64*"]);
        await ok("cloud version delete", cmd("cloud version delete acme/tool 1.0.0 -f"));
        const box = await api.expectOk("GET", "/api/v2/box/acme/tool", { token: adminToken });
        assertEquals([box.versions, box.current_version], [[], null]);
      });

      await t.step("a revoked token: whoami fails with the server's message", async () => {
        const token = (await alice.storedLoginToken())!;
        const answer = await fetch(`${server.url}/api/v1/authenticate`, {
          method: "DELETE",
          headers: { Authorization: `Bearer ${token}` },
        });
        assertEquals(answer.status, 204);
        const whoami = await v("cloud", "auth", "whoami");
        assert(whoami.code !== 0, describeRun("vagrant cloud auth whoami (revoked token)", whoami));
        assertStringIncludes(whoami.output, "Bad access token!");
      });
    }),
});
