// Which API family owns a path, from what each family declares: its error renderer and the paths it owns.

import type { ApiError } from "../errors.ts";
import type { Family } from "../http.ts";

export type ErrorRenderer = (error: ApiError, requestId: string) => Response;

/** The paths a family owns: its 404s, 405s, 413s and 500s are rendered in its shape. */
export interface PathOwnership {
  /** Whole paths, e.g. "/health". */
  paths?: readonly string[];
  /**
   * Path heads, each "/" alone (every path no other family owns) or ending with "/" or ":" inside its second
   * segment at the earliest, e.g. "/v1/" or "/v1/auth-methods:". The longest that a path starts with wins.
   */
  prefixes?: readonly string[];
}

/** An API family as a module declares it with its routes (lib/app.ts ApiModule). */
export interface ApiFamily {
  name: Family;
  render: ErrorRenderer;
  owns: PathOwnership;
}

/** Each family's renderer, and the owner of any path (looked up on failures and by the few handlers asking). */
export class FamilyTable {
  #renderers = new Map<Family, ErrorRenderer>();
  #exact = new Map<string, Family>();
  /** Prefixes by their first segment ("v1" for "/v1/auth-methods:"), longest first. */
  #prefixes = new Map<string, [prefix: string, family: Family][]>();
  /** The owner of every path nothing else claims: the family owning "/", else the first declared. */
  #fallback: Family;

  constructor(families: readonly ApiFamily[]) {
    if (families.length === 0) throw new Error("a router needs at least one API family");
    this.#fallback = families[0]!.name;
    for (const family of families) {
      const known = this.#renderers.get(family.name);
      if (known && known !== family.render) throw new Error(`family ${family.name}: two error renderers`);
      this.#renderers.set(family.name, family.render);
      for (const path of family.owns.paths ?? []) this.#exact.set(path, family.name);
      for (const prefix of family.owns.prefixes ?? []) {
        if (prefix === "/") {
          this.#fallback = family.name;
          continue;
        }
        const segment = firstSegmentOfPrefix(prefix);
        const list = this.#prefixes.get(segment) ?? [];
        list.push([prefix, family.name]);
        list.sort((a, b) => b[0].length - a[0].length);
        this.#prefixes.set(segment, list);
      }
    }
  }

  /** The family owning `path` (a request path, starting with "/"). */
  ownerOf(path: string): Family {
    const exact = this.#exact.get(path);
    if (exact !== undefined) return exact;
    const end = path.indexOf("/", 1);
    if (end < 0) return this.#fallback;
    const candidates = this.#prefixes.get(path.slice(1, end));
    if (candidates) { for (const [prefix, family] of candidates) if (path.startsWith(prefix)) return family; }
    return this.#fallback;
  }

  /** `error` in the shape of `family`. */
  render(family: Family, error: ApiError, requestId: string): Response {
    return (this.#renderers.get(family) ?? this.#renderers.get(this.#fallback)!)(error, requestId);
  }

  /** First segments some family claims paths under: the route index gives each its own candidate list. */
  territories(): string[] {
    const segments = new Set(this.#prefixes.keys());
    for (const path of this.#exact.keys()) segments.add(firstSegmentOfPath(path));
    return [...segments];
  }

  /** Whether no path whose first segment is `segment` belongs to `family`. */
  ownsNothingUnder(family: Family, segment: string): boolean {
    const head = `/${segment}`;
    if (this.ownerOf(head) === family) return false;
    for (const [path, owner] of this.#exact) {
      if (owner === family && path.startsWith(`${head}/`)) return false;
    }
    const prefixes = this.#prefixes.get(segment) ?? [];
    if (prefixes.some(([, owner]) => owner === family)) return false;
    // Paths under `/segment/` no prefix claims fall to the fallback family.
    return prefixes.some(([prefix]) => prefix === `${head}/`) || this.#fallback !== family;
  }
}

function firstSegmentOfPrefix(prefix: string): string {
  const end = prefix.indexOf("/", 1);
  if (!prefix.startsWith("/") || end < 0) {
    throw new Error(`family prefix ${prefix}: "/" alone, or reaching into the second segment`);
  }
  return prefix.slice(1, end);
}

function firstSegmentOfPath(path: string): string {
  const end = path.indexOf("/", 1);
  return path.slice(1, end < 0 ? path.length : end);
}
