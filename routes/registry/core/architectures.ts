// Providers per architecture (docs/registry.md#vagrant-24): the architecture values, identity (name,
// architecture), the one default architecture per provider name and version, and what v1 sees of it. Plain
// functions, no HTTP.

import type { BoxDoc, ProviderDoc, VersionDoc } from "./model.ts";

export const ARCHITECTURES: readonly string[] = [
  "amd64",
  "i386",
  "arm",
  "arm64",
  "ppc64le",
  "ppc64",
  "mips64le",
  "mips64",
  "mipsle",
  "mips",
  "s390x",
  "unknown",
];

/** What a provider created without an architecture (every v1 create, every provider from before v2) has. */
export const UNKNOWN = "unknown";

export const INVALID_ARCHITECTURE = `Architecture must be one of ${ARCHITECTURES.join(", ")}`;
/** v1: the name is taken in any architecture. */
export const DUPLICATE_NAME = "Metadata provider must be unique for version";
/** v2: the (name, architecture) pair is taken. */
export const DUPLICATE_PAIR = "Metadata provider must be unique for version and architecture";

const known = new Set(ARCHITECTURES);

export function isArchitecture(value: string): boolean {
  return known.has(value);
}

/**
 * Providers stored before architectures existed lack both fields: they read as `unknown` and default (each
 * was the only provider of its name). Fills them in place on documents loaded at start, before any read.
 */
export function fillArchitectureDefaults(box: BoxDoc): void {
  for (const v of box.versions) {
    for (const p of v.providers) {
      if (typeof p.architecture !== "string") p.architecture = UNKNOWN;
      if (typeof p.default_architecture !== "boolean") p.default_architecture = true;
    }
  }
}

/** The provider `name` in `architecture`, if any. */
export function providerIn(version: VersionDoc, name: string, architecture: string): ProviderDoc | undefined {
  return version.providers.find((p) => p.name === name && p.architecture === architecture);
}

/** The default-architecture provider of `name`: what a v1 provider path means. */
export function defaultProvider(version: VersionDoc, name: string): ProviderDoc | undefined {
  return version.providers.find((p) => p.name === name && p.default_architecture);
}

/** What v1 answers list: the default-architecture provider of each name, in creation order. */
export function v1Providers(version: VersionDoc): ProviderDoc[] {
  return version.providers.every((p) => p.default_architecture)
    ? version.providers
    : version.providers.filter((p) => p.default_architecture);
}

/**
 * Restores "exactly one default per provider name" after a change: `prefer` takes the flag of its name; a name
 * left without a default passes it to its oldest provider (the providers array is in creation order), other
 * than `avoid` when there is another (a provider set `false` keeps the flag only when it is alone); a second
 * default of a name (a rename into a name that has one) loses it.
 */
export function settleDefaults(
  version: VersionDoc,
  options: { prefer?: ProviderDoc; avoid?: ProviderDoc } = {},
): void {
  const { prefer, avoid } = options;
  const holders = new Map<string, ProviderDoc>();
  if (prefer) holders.set(prefer.name, prefer);
  for (const p of version.providers) {
    if (p === avoid && p !== prefer) continue;
    const holder = holders.get(p.name);
    if (holder === undefined) {
      if (p.default_architecture) holders.set(p.name, p);
    } else if (p !== holder) p.default_architecture = false;
  }
  if (prefer) prefer.default_architecture = true;
  if (avoid && avoid !== prefer) avoid.default_architecture = false;
  for (const p of version.providers) {
    if (!holders.has(p.name) && p !== avoid) {
      p.default_architecture = true;
      holders.set(p.name, p);
    }
  }
  if (avoid && !holders.has(avoid.name)) avoid.default_architecture = true;
}

/** Each provider's default flag, to find afterwards whose flag a change moved. */
export function defaultFlags(version: VersionDoc): Map<ProviderDoc, boolean> {
  return new Map(version.providers.map((p) => [p, p.default_architecture]));
}

/** Providers other than `subject` whose default flag differs from `before` (each gets a ProviderUpdated). */
export function movedDefaults(
  version: VersionDoc,
  before: Map<ProviderDoc, boolean>,
  subject: ProviderDoc,
): ProviderDoc[] {
  return version.providers.filter((p) =>
    p !== subject && before.has(p) && before.get(p) !== p.default_architecture
  );
}
