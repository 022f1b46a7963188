// Redacts secrets carried in request paths (upload ids) from the access log, by the path's shape: whatever the
// method, status, letter case, percent-encoding (an encoded "/" or a doubly encoded name included), repeated or
// trailing slashes, and whether a route matched; and anything shaped like a whole secret, wherever it appears.

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
   * followed by segments a client added), and every run shaped like a whole secret too. Unchanged when neither
   * shows, as it is or fully decoded.
   */
  redact(path: string): string {
    const byShape = this.#byShape(path);
    if (byShape !== undefined) return redactSecretRuns(byShape) ?? byShape;
    // An escaped "/" or a doubly escaped name hides the shape until the whole path is decoded: the decoded
    // form is logged when it shows a secret.
    const decoded = path.includes("%") ? decodeFully(path) : path;
    if (decoded !== path) {
      const decodedByShape = this.#byShape(decoded);
      if (decodedByShape !== undefined) return redactSecretRuns(decodedByShape) ?? decodedByShape;
    }
    return redactSecretRuns(path) ?? (decoded !== path ? redactSecretRuns(decoded) : undefined) ?? path;
  }

  /** Secret segments of a route's shape replaced (and all after them), or undefined when no shape matches. */
  #byShape(path: string): string | undefined {
    if (!this.#candidate?.test(path)) return undefined;
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
    return undefined;
  }
}

/** The length of the shortest whole secret wharf issues (32 random bytes in base64url; lib/ids.ts). */
const secretLength = 43;
const secretRun = /[A-Za-z0-9_-]{43}/;
const secretRuns = /[A-Za-z0-9_-]{43,}/g;

/** `path` with every run shaped like a whole secret replaced by "***", or undefined when it has none. */
function redactSecretRuns(path: string): string | undefined {
  if (path.length < secretLength || !secretRun.test(path)) return undefined;
  let found = false;
  const replaced = path.replace(secretRuns, (run) => {
    if (!looksRandom(run)) return run;
    found = true;
    return "***";
  });
  return found ? replaced : undefined;
}

/** Upper case, lower case and digits together: a random token has all three, a long box name seldom does. */
function looksRandom(run: string): boolean {
  return /[A-Z]/.test(run) && /[a-z]/.test(run) && /[0-9]/.test(run);
}

/** Percent-decoded until nothing changes (at most 4 rounds: doubly and triply escaped names too). */
function decodeFully(path: string): string {
  let current = path;
  for (let round = 0; round < 4 && current.includes("%"); round++) {
    const next = decodeLeniently(current);
    if (next === current) break;
    current = next;
  }
  return current;
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
