// The default-architecture rules (docs/registry.md#vagrant-24) as plain functions: settleDefaults keeps exactly one
// default per provider name, movedDefaults names the providers whose flag a change moved, v1Providers what v1 shows.

import { assertEquals } from "../helpers/assert.ts";
import {
  defaultFlags,
  fillArchitectureDefaults,
  isArchitecture,
  movedDefaults,
  settleDefaults,
  v1Providers,
} from "../../routes/registry/core/architectures.ts";
import type { BoxDoc, ProviderDoc, VersionDoc } from "../../routes/registry/core/model.ts";

function provider(name: string, architecture: string, isDefault: boolean): ProviderDoc {
  return {
    name,
    architecture,
    default_architecture: isDefault,
    url: null,
    checksum: null,
    checksum_type: null,
    blob: null,
    created_at: "",
    updated_at: "",
  };
}

function version(...providers: ProviderDoc[]): VersionDoc {
  return {
    version: "1.0.0",
    status: "unreleased",
    description: null,
    providers,
    created_at: "",
    updated_at: "",
  };
}

const flags = (v: VersionDoc) =>
  v.providers.map((p) => `${p.name}/${p.architecture}${p.default_architecture ? "*" : ""}`);

Deno.test("settleDefaults: the oldest of a name without a default gets it; prefer takes it; avoid passes it", () => {
  const v = version(
    provider("vb", "amd64", false),
    provider("vb", "arm64", false),
    provider("lv", "amd64", false),
  );
  settleDefaults(v);
  assertEquals(flags(v), ["vb/amd64*", "vb/arm64", "lv/amd64*"]);
  settleDefaults(v, { prefer: v.providers[1] });
  assertEquals(flags(v), ["vb/amd64", "vb/arm64*", "lv/amd64*"]);
  settleDefaults(v, { avoid: v.providers[1] });
  assertEquals(flags(v), ["vb/amd64*", "vb/arm64", "lv/amd64*"]);
  // Avoiding the only one of its name leaves it the default.
  settleDefaults(v, { avoid: v.providers[2] });
  assertEquals(flags(v), ["vb/amd64*", "vb/arm64", "lv/amd64*"]);
  // Two defaults of one name (a rename into it): the first in creation order keeps it.
  v.providers[1]!.default_architecture = true;
  settleDefaults(v);
  assertEquals(flags(v), ["vb/amd64*", "vb/arm64", "lv/amd64*"]);
});

Deno.test("movedDefaults names every other provider whose flag changed; v1Providers shows the defaults", () => {
  const v = version(
    provider("vb", "amd64", true),
    provider("vb", "arm64", false),
    provider("lv", "s390x", true),
  );
  const before = defaultFlags(v);
  const subject = v.providers[1]!;
  settleDefaults(v, { prefer: subject });
  assertEquals(movedDefaults(v, before, subject).map((p) => p.architecture), ["amd64"]);
  assertEquals(v1Providers(v).map((p) => `${p.name}/${p.architecture}`), ["vb/arm64", "lv/s390x"]);
});

Deno.test("stored providers without architecture fields read as unknown defaults; the value list", () => {
  const old = provider("vb", "", true) as Partial<ProviderDoc>;
  delete old.architecture;
  delete old.default_architecture;
  const box = { versions: [version(old as ProviderDoc)] } as unknown as BoxDoc;
  fillArchitectureDefaults(box);
  assertEquals(flags(box.versions[0]!), ["vb/unknown*"]);
  assertEquals(["amd64", "unknown", "s390x"].map(isArchitecture), [true, true, true]);
  assertEquals(["x86_64", "AMD64", "", "arm64 "].map(isArchitecture), [false, false, false, false]);
});
