// Which routes can match a request path, looked up by its segment count and first segment: a route whose
// literal segments differ from the path's is never tried, and the candidates keep the order of the table where it
// matters (first match wins): a route moves ahead only of routes that can never match the same path.

/** What the index needs of a route. */
export interface IndexableRoute {
  /** The URLPattern pathname. */
  path: string;
  /** Its literal head (up to the first parameter, group or wildcard). */
  prefix: string;
  /** Position in the table. */
  order: number;
  /** Its segments when their count is fixed (see segmentShape), else undefined. */
  segments: readonly (string | undefined)[] | undefined;
}

/** A literal segment to check before trying a route's pattern: its position in the path and its text. */
export type LiteralSegment = readonly [index: number, text: string];

/**
 * A negated character class that excludes "/" (e.g. `[^/:]+`): a parameter with it stays within one segment.
 * Without brackets, parentheses or escapes inside, so that splitting on "/" cannot have misread the pattern.
 */
const oneSegmentRegex = /^\[\^[^\]\\()[]*\/[^\]\\()[]*\][+*]?\??$/;

/**
 * The segments of a pattern that always has as many as its path has "/": each the literal text that segment must
 * equal, or undefined where it holds a parameter (or anything but plain text). Undefined for patterns whose
 * segment count varies (groups, wildcards, modifiers, regex parameters that could match "/").
 */
export function segmentShape(pattern: string): (string | undefined)[] | undefined {
  if (!pattern.startsWith("/")) return undefined;
  const shape: (string | undefined)[] = [];
  for (const segment of splitTopLevel(pattern.slice(1))) {
    if (segment === undefined) return undefined;
    if (segment.includes("\\/")) return undefined;
    if (!/[:*(){}?+\\]/.test(segment)) {
      shape.push(segment);
      continue;
    }
    // Parameters only, each with the default or a one-segment regex; escapes are plain text.
    const stripped = segment.replace(/\\./g, "x").replace(
      /:[A-Za-z_$][A-Za-z0-9_$]*(\(([^()]*)\))?/g,
      (_, group: string | undefined, body: string | undefined) =>
        group && !oneSegmentRegex.test(body!) ? "(" : "x",
    );
    if (/[:*(){}?+\\]/.test(stripped)) return undefined;
    shape.push(undefined);
  }
  return shape;
}

/** A pattern's text split on the "/" outside parentheses; an undefined piece when it has unbalanced ones. */
function splitTopLevel(text: string): (string | undefined)[] {
  const pieces: (string | undefined)[] = [];
  let depth = 0;
  let start = 0;
  for (let i = 0; i < text.length; i++) {
    const c = text[i];
    if (c === "\\") i++;
    else if (c === "(") depth++;
    else if (c === ")") depth--;
    else if (c === "/" && depth === 0) {
      pieces.push(text.slice(start, i));
      start = i + 1;
    }
  }
  pieces.push(depth === 0 ? text.slice(start) : undefined);
  return pieces;
}

interface Level<R> {
  /** For each first segment some route has as a literal: those routes plus the open ones, in table order. */
  bySegment: Map<string, R[]>;
  /** Routes whose first segment is not a fixed literal. */
  open: R[];
}

/**
 * Slash positions of the last looked-up path, then its length: segment i spans (at[i], at[i + 1]). Scratch
 * memory shared by lookups, which run synchronously, so one request's lookup and checks never interleave.
 */
let slashes = new Int32Array(64);

/** What narrows an index beyond the routes' own literal segments. */
export interface IndexOptions<R> {
  /** First segments that get their own candidate list at every level (those API families claim paths under). */
  territories?: readonly string[];
  /**
   * Whether a route whose first segment is a parameter may answer a path whose first segment is `segment` (and
   * whose segment count is `count`, when the list is for one count): one that may not (a console page under
   * `/:user` for a `/v1/…` path, or for `/health`) is left out of that segment's list.
   */
  fits?(route: R, segment: string, count: number | undefined): boolean;
}

export class RouteIndex<R extends IndexableRoute> {
  /** Per segment count, for routes with a fixed one. */
  #byCount = new Map<number, Level<R>>();
  /** For counts no fixed-shape route has: only the routes whose segment count varies. */
  #variable: Level<R>;

  constructor(routes: readonly R[], options: IndexOptions<R> = {}) {
    const fixed = new Map<number, { literal: Map<string, R[]>; open: R[] }>();
    const variable = { literal: new Map<string, R[]>(), open: [] as R[] };
    for (const route of routes) {
      const shape = route.segments;
      if (!shape) {
        const first = literalFirstSegment(route);
        if (first === undefined) variable.open.push(route);
        else push(variable.literal, first, route);
        continue;
      }
      const level = fixed.get(shape.length) ?? { literal: new Map<string, R[]>(), open: [] as R[] };
      fixed.set(shape.length, level);
      const first = shape[0];
      if (first === undefined) level.open.push(route);
      else push(level.literal, first, route);
    }
    this.#variable = merge([variable], options, undefined);
    for (const [count, level] of fixed) this.#byCount.set(count, merge([level, variable], options, count));
  }

  /**
   * The routes that can match `path` (it starts with "/"), in table order. Fixed-shape routes among them still
   * need `literalsMatch` for their later literal segments before their pattern is tried.
   */
  candidates(path: string): readonly R[] {
    let count = 0;
    for (let i = 0; i < path.length; i++) {
      if (path.charCodeAt(i) !== 0x2f) continue;
      if (count === slashes.length) {
        const grown = new Int32Array(count * 2);
        grown.set(slashes);
        slashes = grown;
      }
      slashes[count++] = i;
    }
    if (count === slashes.length) {
      const grown = new Int32Array(count + 1);
      grown.set(slashes);
      slashes = grown;
    }
    slashes[count] = path.length;
    const level = this.#byCount.get(count) ?? this.#variable;
    const first = path.slice(1, count > 1 ? slashes[1] : path.length);
    return level.bySegment.get(first) ?? level.open;
  }
}

/**
 * The first segment every path a variable route matches has, when its pattern fixes it: the text before a second
 * "/" of its literal head, or its whole head when all that follows is one group starting with "/" (`/ui{/*}?`).
 */
function literalFirstSegment(route: IndexableRoute): string | undefined {
  const end = route.prefix.indexOf("/", 1);
  if (end >= 0) return route.prefix.slice(1, end);
  const rest = route.path.slice(route.prefix.length);
  if (route.prefix.length > 1 && /^\{\/[^{}]*\}[?*+]?$/.test(rest)) return route.prefix.slice(1);
  return undefined;
}

/** A fixed-shape route's literal segments after the first (the first is the lookup key), to check per request. */
export function laterLiterals(
  segments: readonly (string | undefined)[] | undefined,
): readonly LiteralSegment[] {
  const literals: LiteralSegment[] = [];
  for (let i = 1; i < (segments?.length ?? 0); i++) {
    if (segments![i] !== undefined) literals.push([i, segments![i]!]);
  }
  return literals;
}

/** A parameter that fills a whole segment: its position among the path's segments and its name. */
export type SegmentParam = readonly [index: number, name: string];

/**
 * The parameters of a fixed-shape pattern (`segments`: its segmentShape) when each is a whole segment in the
 * default syntax (`:name`: any non-empty text without "/"), else undefined. Such a pattern matches exactly the
 * paths of its segment count with its literal segments and no empty parameter segment, and its parameters are
 * those segments: no RegExp needs to run (see segmentValues).
 */
export function segmentParams(
  pattern: string,
  segments: readonly (string | undefined)[] | undefined,
): readonly SegmentParam[] | undefined {
  if (!segments) return undefined;
  const pieces = splitTopLevel(pattern.slice(1));
  const params: SegmentParam[] = [];
  for (let i = 0; i < segments.length; i++) {
    if (segments[i] !== undefined) continue;
    const piece = pieces[i];
    if (piece === undefined || !/^:[A-Za-z_$][A-Za-z0-9_$]*$/.test(piece)) return undefined;
    params.push([i, piece.slice(1)]);
  }
  return params;
}

/**
 * The segment parameters of the path given to the last `RouteIndex.candidates` call (whose literal segments
 * `literalsMatch` found equal), or undefined when one of them is empty (no match).
 */
export function segmentValues(
  params: readonly SegmentParam[],
  path: string,
): Record<string, string> | undefined {
  const values: Record<string, string> = {};
  for (let n = 0; n < params.length; n++) {
    const [i, name] = params[n]!;
    const start = slashes[i]! + 1;
    const end = slashes[i + 1]!;
    if (end === start) return undefined;
    values[name] = path.slice(start, end);
  }
  return values;
}

/** Whether the path given to the last `RouteIndex.candidates` call has these literal segments. */
export function literalsMatch(literals: readonly LiteralSegment[], path: string): boolean {
  for (let n = 0; n < literals.length; n++) {
    const [i, text] = literals[n]!;
    const start = slashes[i]! + 1;
    if (slashes[i + 1]! - start !== text.length || !path.startsWith(text, start)) return false;
  }
  return true;
}

function push<R>(map: Map<string, R[]>, key: string, route: R): void {
  const list = map.get(key);
  if (list) list.push(route);
  else map.set(key, [route]);
}

/**
 * One lookup level from groups of routes: each literal first segment (and each territory) gets its routes plus
 * every open one that fits it.
 */
function merge<R extends IndexableRoute>(
  groups: { literal: Map<string, R[]>; open: R[] }[],
  options: IndexOptions<R>,
  count: number | undefined,
): Level<R> {
  const open = groups.flatMap((g) => g.open).sort(byOrder);
  const keys = new Set([...groups.flatMap((g) => [...g.literal.keys()]), ...options.territories ?? []]);
  const bySegment = new Map<string, R[]>();
  for (const key of keys) {
    const fitting = options.fits ? open.filter((r) => options.fits!(r, key, count)) : open;
    const list = [...groups.flatMap((g) => g.literal.get(key) ?? []), ...fitting].sort(byOrder);
    bySegment.set(key, literalFirst(list));
  }
  return { bySegment, open };
}

/**
 * The routes of one list (in table order) with each route whose first segment is literal moved ahead of the open
 * routes before it that can never match the same path (a literal segment differs): the first route to match any
 * path is the same, and an API path finds its route without first trying the console's pages under `/:user`.
 */
function literalFirst<R extends IndexableRoute>(list: readonly R[]): R[] {
  const out: R[] = [];
  for (const route of list) {
    let at = out.length;
    if (route.segments?.[0] !== undefined) {
      while (at > 0 && out[at - 1]!.segments?.[0] === undefined && disjoint(out[at - 1]!, route)) at--;
    }
    out.splice(at, 0, route);
  }
  return out;
}

/** Whether two fixed-shape routes can never match the same path: at some segment both are literal and differ. */
function disjoint(a: IndexableRoute, b: IndexableRoute): boolean {
  const x = a.segments;
  const y = b.segments;
  if (!x || !y) return false;
  if (x.length !== y.length) return true;
  for (let i = 0; i < x.length; i++) {
    if (x[i] !== undefined && y[i] !== undefined && x[i] !== y[i]) return true;
  }
  return false;
}

function byOrder(a: IndexableRoute, b: IndexableRoute): number {
  return a.order - b.order;
}
