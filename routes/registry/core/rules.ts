// Field rules shared by handlers: name patterns, RubyGems version syntax and ordering, checksums.

export const namespacePattern = /^[A-Za-z0-9](?:[A-Za-z0-9_-]{0,38}[A-Za-z0-9])?$/;
export const boxNamePattern = /^[A-Za-z0-9][A-Za-z0-9._-]{0,99}$/;
export const providerNamePattern = /^[a-z0-9][a-z0-9_-]{0,63}$/;
export const mobilePattern = /^\+[1-9][0-9]{6,14}$/;
const versionPattern = /^[0-9]+(\.[0-9a-zA-Z]+)*(-[0-9A-Za-z-]+(\.[0-9A-Za-z-]+)*)?$/;
const emailPattern = /^[^\s@]+@[^\s@]+\.[^\s@]+$/;

export const reservedNames = new Set([
  "admin",
  "api",
  "v1",
  "v2",
  "box",
  "boxes",
  "user",
  "search",
  "uploads",
  "login",
  "static",
  "ui",
  "wharf",
  "oauth2",
]);

export const checksumLengths: Record<string, number> = {
  md5: 32,
  sha1: 40,
  sha256: 64,
  sha384: 96,
  sha512: 128,
};

export const SHORT_DESCRIPTION_MAX = 255;
export const LONG_TEXT_MAX = 64 * 1024;

export function isValidBoxName(name: string): boolean {
  return boxNamePattern.test(name) && name !== "." && name !== "..";
}

export function isValidVersion(v: string): boolean {
  return v.length <= 64 && versionPattern.test(v);
}

export function isValidEmail(e: string): boolean {
  return e.length <= 254 && emailPattern.test(e);
}

type Segment = number | string;

/** Gem::Version segments: `-` reads as `.pre.`; digit runs are numbers, letter runs strings. */
function segments(v: string): Segment[] {
  const out: Segment[] = [];
  for (const m of v.replaceAll("-", ".pre.").matchAll(/[0-9]+|[a-zA-Z]+/g)) {
    out.push(/^[0-9]/.test(m[0]) ? Number(m[0]) : m[0]);
  }
  return out;
}

/** Compares like Gem::Version#<=>: missing segments are 0, a string sorts before any number. */
export function compareVersions(a: string, b: string): number {
  const l = segments(a);
  const r = segments(b);
  const n = Math.max(l.length, r.length);
  for (let i = 0; i < n; i++) {
    const x = l[i] ?? 0;
    const y = r[i] ?? 0;
    if (x === y) continue;
    if (typeof x === "string" && typeof y === "number") return -1;
    if (typeof x === "number" && typeof y === "string") return 1;
    return x < y ? -1 : 1;
  }
  return 0;
}
