// Which API family owns a path, from what each family declares: its error renderer and the paths it owns.

import type { ApiError } from "../errors.ts";
import type { Family } from "../http.ts";

export type ErrorRenderer = (error: ApiError, requestId: string) => Response;

/** The paths a family owns: its 404s, 405s, 413s and 500s are rendered in its shape. */
export interface PathOwnership {
  /** Whole paths, e.g. "/health". */
  paths?: readonly string[];
  /**
   * Path heads: "/" alone (every path no other family owns), "/a/" (every path under a first segment), "/a/b/" or
   * "/a/b:" (under a second segment, or its custom verbs). The most specific one a path starts with wins.
   */
  prefixes?: readonly string[];
}

/** An API family as a module declares it with its routes (lib/app.ts ApiModule). */
export interface ApiFamily {
  name: Family;
  render: ErrorRenderer;
  owns: PathOwnership;
}

/** One claim of a family: a whole path, or a path head. */
interface Claim {
  text: string;
  exact: boolean;
  family: Family;
}

/** Claims of one family that follow each other in priority order, as one RegExp (a few tests per lookup). */
interface Run {
  test: RegExp;
  family: Family;
}

/** Each family's renderer, and the owner of any path (looked up on failures and by the few handlers asking). */
export class FamilyTable {
  #renderers = new Map<Family, ErrorRenderer>();
  /** Whole paths first, then heads, longest first: the first that applies names the owner. */
  #claims: Claim[];
  /** The same claims as one RegExp per family (or per run of a family, should families interleave). */
  #runs: Run[] = [];
  /** Whether a path's first segment is one some claim is under: most paths are not, and one test says so. */
  #claimed: RegExp;
  #segments = new Set<string>();
  /** The owner of every path nothing else claims: the family owning "/", else the first declared. */
  #fallback: Family;

  constructor(families: readonly ApiFamily[]) {
    if (families.length === 0) throw new Error("a router needs at least one API family");
    this.#fallback = families[0]!.name;
    const exact: Claim[] = [];
    const heads: Claim[] = [];
    for (const family of families) {
      const known = this.#renderers.get(family.name);
      if (known && known !== family.render) throw new Error(`family ${family.name}: two error renderers`);
      this.#renderers.set(family.name, family.render);
      for (const path of family.owns.paths ?? []) {
        exact.push({ text: path, exact: true, family: family.name });
        this.#segments.add(firstSegmentOfPath(path));
      }
      for (const prefix of family.owns.prefixes ?? []) {
        if (prefix === "/") {
          this.#fallback = family.name;
          continue;
        }
        heads.push({ text: prefix, exact: false, family: family.name });
        this.#segments.add(prefixSegments(prefix)[0]);
      }
    }
    this.#claims = [...exact, ...heads.sort((a, b) => b.text.length - a.text.length)];
    this.#runs = runsOf(this.#claims);
    const alternatives = [...this.#segments].map(escapeRegex);
    this.#claimed = alternatives.length ? new RegExp(`^/(?:${alternatives.join("|")})(?:/|$)`) : /(?!)/;
  }

  /** The family owning `path` (a request path, starting with "/"). */
  ownerOf(path: string): Family {
    if (!this.#claimed.test(path)) return this.#fallback;
    const runs = this.#runs;
    for (let i = 0; i < runs.length; i++) if (runs[i]!.test.test(path)) return runs[i]!.family;
    return this.#fallback;
  }

  /** `error` in the shape of `family`. */
  render(family: Family, error: ApiError, requestId: string): Response {
    return (this.#renderers.get(family) ?? this.#renderers.get(this.#fallback)!)(error, requestId);
  }

  /** First segments some family claims paths under: the route index gives each its own candidate list. */
  territories(): string[] {
    return [...this.#segments];
  }

  /**
   * Whether no path whose first segment is `segment` belongs to `family`; with `count`, no such path of `count`
   * segments (the one path of one segment, `/health`, may be another family's while `/health/x` is not).
   */
  ownsNothingUnder(family: Family, segment: string, count?: number): boolean {
    const head = `/${segment}`;
    if (count === 1) return this.ownerOf(head) !== family;
    if (this.ownerOf(head) === family) return false;
    const under = this.#claims.filter((c) => c.text.startsWith(`${head}/`));
    if (under.some((c) => c.family === family)) return false;
    // Paths under `/segment/` no claim covers fall to the fallback family.
    return under.some((c) => !c.exact && c.text === `${head}/`) || this.#fallback !== family;
  }
}

/**
 * The claims as RegExps to test in order: one per family, ordered so that a family whose claim is more specific
 * than an overlapping one of another family (a whole path, or a longer head) is tested first; when no such order
 * exists, one per run of a family's claims in priority order.
 */
function runsOf(claims: readonly Claim[]): Run[] {
  const before = new Map<Family, Set<Family>>();
  for (const a of claims) {
    for (const b of claims) {
      if (a.family === b.family || b.exact || !a.text.startsWith(b.text)) continue;
      if (!a.exact && a.text.length === b.text.length) continue;
      // `a` is within head `b` and more specific: a's family goes first.
      const set = before.get(b.family) ?? new Set();
      set.add(a.family);
      before.set(b.family, set);
    }
  }
  const families = [...new Set(claims.map((c) => c.family))];
  const ordered: Family[] = [];
  const visiting = new Set<Family>();
  const visit = (family: Family): boolean => {
    if (ordered.includes(family)) return true;
    if (visiting.has(family)) return false;
    visiting.add(family);
    for (const first of before.get(family) ?? []) if (!visit(first)) return false;
    ordered.push(family);
    return true;
  };
  const regexOf = (group: readonly Claim[]) =>
    new RegExp(`^(?:${group.map((c) => escapeRegex(c.text) + (c.exact ? "$" : "")).join("|")})`);
  if (families.every(visit)) {
    return ordered.map((family) => ({ test: regexOf(claims.filter((c) => c.family === family)), family }));
  }
  const runs: Run[] = [];
  for (let i = 0; i < claims.length;) {
    let j = i;
    while (j < claims.length && claims[j]!.family === claims[i]!.family) j++;
    runs.push({ test: regexOf(claims.slice(i, j)), family: claims[i]!.family });
    i = j;
  }
  return runs;
}

function escapeRegex(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\/]/g, "\\$&");
}

/**
 * A prefix's first segment, and its second segment with the character ending it ("" for "/segment/"): the
 * shapes "/a/", "/a/b/" and "/a/b:" are the ones supported.
 */
function prefixSegments(prefix: string): [string, string] {
  const end = prefix.indexOf("/", 1);
  const second = end < 0 ? "" : prefix.slice(end + 1);
  if (!prefix.startsWith("/") || end < 0 || (second !== "" && !/^[^/:]+[/:]$/.test(second))) {
    throw new Error(`family prefix ${prefix}: "/", "/a/", "/a/b/" or "/a/b:"`);
  }
  return [prefix.slice(1, end), second];
}

function firstSegmentOfPath(path: string): string {
  const end = path.indexOf("/", 1);
  return path.slice(1, end < 0 ? path.length : end);
}
