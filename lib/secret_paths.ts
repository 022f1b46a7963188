// Redacts secrets carried in request paths (upload ids) from the access log, by the path's shape: whatever the
// method, status, letter case, percent-encoding, repeated or trailing slashes, and whether a route matched.

/** One segment of a secret route's path: a literal (lowercase) or a parameter, secret or not. */
type ShapeSegment = { literal: string } | { secret: boolean };

/** The route fields this module reads (lib/router.ts Route). */
export interface SecretRoute {
  path: string;
  secretParams?: readonly string[];
}

export class SecretPathRedactor {
  #shapes: ShapeSegment[][];
  /** A path can carry a secret only if it holds "%" or a shape's last literal (a cheap test for every request). */
  #candidate: RegExp | undefined;

  constructor(routes: readonly SecretRoute[]) {
    this.#shapes = routes.filter((r) => r.secretParams?.length).map((r) => shapeOf(r.path, r.secretParams!));
    const markers = new Set<string>();
    for (const shape of this.#shapes) {
      const literals = shape.filter((s): s is { literal: string } => "literal" in s);
      const last = literals[literals.length - 1];
      if (!last) throw new Error("a route with secret parameters needs a literal segment");
      markers.add(last.literal.replace(/[.*+?^${}()|[\]\\]/g, "\\$&"));
    }
    this.#candidate = markers.size ? new RegExp(`%|${[...markers].join("|")}`, "i") : undefined;
  }

  /**
   * `path` with every segment in a secret position replaced by "***" (and everything after it: a secret may be
   * followed by segments a client added). Unchanged when no shape matches.
   */
  redact(path: string): string {
    if (!this.#candidate?.test(path)) return path;
    const raw = path.split("/");
    // Positions of non-empty segments: "//" and a trailing "/" do not change which segment is which.
    const positions: number[] = [];
    for (let i = 0; i < raw.length; i++) if (raw[i] !== "") positions.push(i);
    const decoded = positions.map((i) => decodeLeniently(raw[i]!).toLowerCase());
    for (const shape of this.#shapes) {
      if (decoded.length < shape.length) continue;
      const firstSecret = matchShape(shape, decoded);
      if (firstSecret === undefined) continue;
      for (let k = firstSecret; k < positions.length; k++) raw[positions[k]!] = "***";
      return raw.join("/");
    }
    return path;
  }
}

/** The index of the first secret segment when `segments` start with `shape`, else undefined. */
function matchShape(shape: readonly ShapeSegment[], segments: readonly string[]): number | undefined {
  let firstSecret: number | undefined;
  for (let k = 0; k < shape.length; k++) {
    const s = shape[k]!;
    if ("literal" in s) {
      if (segments[k] !== s.literal) return undefined;
    } else if (s.secret && firstSecret === undefined) firstSecret = k;
  }
  return firstSecret;
}

function shapeOf(path: string, secretParams: readonly string[]): ShapeSegment[] {
  if (/[*{}()\\]/.test(path)) throw new Error(`secret parameters need a plain path pattern, got ${path}`);
  return path.split("/").filter((s) => s !== "").map((segment) =>
    segment.startsWith(":")
      ? { secret: secretParams.includes(segment.slice(1)) }
      : { literal: segment.toLowerCase() }
  );
}

/** Percent-decodes what decodes; a malformed escape or invalid UTF-8 stays as it is. */
function decodeLeniently(segment: string): string {
  if (!segment.includes("%")) return segment;
  try {
    return decodeURIComponent(segment);
  } catch {
    return segment.replace(
      /%[0-9a-fA-F]{2}/g,
      (escape) => String.fromCharCode(parseInt(escape.slice(1), 16)),
    );
  }
}
