// The list engine shared by every resource of the family (docs/auth-methods.md#pagination): created_time-desc
// initial phase, updated_time-desc refresh phases with removed_ids, MAC'd opaque list tokens, filters,
// est_item_count.

import { constantTimeEqual, sha256Hex } from "../../../lib/crypto.ts";
import type { Keyring } from "../../../lib/crypto.ts";
import type { StoredDoc } from "../../../lib/store/mod.ts";
import { type Expr, filterParam, FilterParseError, parseFilter } from "../../../lib/bexpr/parse.ts";
import { evaluateFilter } from "../../../lib/bexpr/eval.ts";
import { fieldError, invalidListToken } from "../errors.ts";
import { json } from "../../../lib/http.ts";
import type { ActorCaller, ListCache, ListSnapshot as Snapshot, TombstoneDoc } from "../state.ts";

interface Timed {
  created_time: string;
  updated_time: string;
}

export interface ListRequest<T extends Timed> {
  resource: string;
  /** Documents in the query's scopes (or of its parent), before visibility and filtering. */
  candidates: Iterable<StoredDoc<T>>;
  /** Tombstones that belong to this query (same resource and scopes). */
  tombstones: Iterable<StoredDoc<TombstoneDoc>>;
  /**
   * When given, phases record the commit index their listing reflects, and a refresh takes the candidates
   * and tombstones written after the previous phase's index from indexes ordered by commit, instead of
   * scanning `candidates` by updated_time (which also re-sends writes whose clock ran ahead of the phase).
   */
  changedSince?: {
    /** The highest commit index the documents in memory reflect. */
    appliedIndex(): number;
    updated(afterIndex: number): Iterable<StoredDoc<T>>;
    deleted(afterIndex: number): Iterable<StoredDoc<TombstoneDoc>>;
  };
  /** The item as this caller receives it, or undefined when the caller may not see it. */
  render(stored: StoredDoc<T>): Record<string, unknown> | undefined;
  caller: ActorCaller;
  /** Identifies the query (scope, recursion, filter…) so a token cannot be reused for another. */
  queryKey: string;
  url: URL;
  defaultPageSize: number;
  keys: Keyring;
  /** Changes whenever any listed collection changes: full listings are reused while it stays the same. */
  generation: number;
  cache: ListCache;
  /** When given, a cached listing is brought up to date by re-rendering only the documents changed since. */
  incremental?: {
    /** Ids changed after generation `since`, or undefined when the listing must be rebuilt. */
    changesSince(since: number): string[] | undefined;
    lookup(id: string): StoredDoc<T> | undefined;
    /** Whether the document belongs to this query's candidates (its scopes). */
    accepts(stored: StoredDoc<T>): boolean;
  };
}

interface TokenBody {
  r: string;
  cs: number;
  u: string;
  a: boolean;
  q: string;
  ph: "i" | "r";
  /** Start of this phase (ms). */
  ps: number;
  /** Refresh only: start of the previous phase (the lower bound of updated_time). */
  pv?: number;
  /** With changedSince: the commit index this phase's start reflects, and the previous phase's. */
  pi?: number;
  pvi?: number;
  /** Last key returned: [time, id]. */
  lk?: [string, string];
  /** The est_item_count of the last response, carried so refreshes need not recount everything. */
  e?: number;
  done: boolean;
}

/** `key` is time + NUL + id: ISO times have one length, so plain string order is (time, id) order. */
type Entry = { key: string; item: Record<string, unknown> };
const entryKey = (time: string, id: string) => `${time}\u0000${id}`;

const maxSnapshots = 32;

const tokenPurpose = "auth.list-token";
const chainMaxMs = 30 * 86_400_000;

/** Parses query parameters common to lists: filter (400 on `filter`) and page_size (truncated). */
export function parseFilterParam(url: URL): Expr | undefined {
  try {
    const raw = filterParam(url);
    // Boundary: an empty filter matches everything; whitespace alone is a filter that does not parse.
    if (raw === null || raw === "") return undefined;
    return parseFilter(raw);
  } catch (err) {
    if (!(err instanceof FilterParseError)) throw err;
    throw fieldError(
      { name: "filter", description: `This field could not be parsed. ${err.message}` },
      "Improperly formatted identifier.",
    );
  }
}

export function parsePageSize(url: URL, defaultPageSize: number): number {
  const raw = url.searchParams.get("page_size");
  if (raw === null || raw === "") return defaultPageSize;
  if (!/^\d{1,10}$/.test(raw)) {
    throw fieldError({ name: "page_size", description: "Must be a non-negative integer." });
  }
  const n = Number(raw);
  return n === 0 || n > defaultPageSize ? defaultPageSize : n;
}

function encodeToken(keys: Keyring, body: TokenBody): string {
  const payload = btoa(JSON.stringify(body)).replaceAll("+", "-").replaceAll("/", "_").replace(/=+$/, "");
  return `${payload}.${keys.hmac(tokenPurpose, payload)}`;
}

function decodeToken(keys: Keyring, raw: string): TokenBody {
  const bad = () => fieldError({ name: "list_token", description: "This field could not be parsed." });
  const [payload, mac, extra] = raw.split(".");
  if (!payload || !mac || extra !== undefined || raw.length > 4096) throw bad();
  if (!constantTimeEqual(keys.hmac(tokenPurpose, payload), mac)) throw bad();
  try {
    const body = JSON.parse(atob(payload.replaceAll("-", "+").replaceAll("_", "/"))) as TokenBody;
    if (typeof body.cs !== "number" || typeof body.ps !== "number") throw new Error("shape");
    return body;
  } catch {
    throw bad();
  }
}

/** Runs one list request and returns the response envelope. */
export function runList<T extends Timed>(
  req: ListRequest<T>,
  filter: Expr | undefined,
): Record<string, unknown> {
  const pageSize = parsePageSize(req.url, req.defaultPageSize);
  const userId = req.caller.kind === "user" ? req.caller.userId : "";
  const admin = req.caller.kind === "user" && req.caller.admin;
  const queryHash = sha256Hex(`${req.resource}\u0000${req.queryKey}`).slice(0, 32);
  const rawToken = req.url.searchParams.get("list_token");
  const now = Date.now();
  const phaseIndex = req.changedSince?.appliedIndex();
  let token: TokenBody;
  let firstRefreshPage = false;
  if (rawToken) {
    const prev = decodeToken(req.keys, rawToken);
    if (now - prev.cs > chainMaxMs) throw invalidListToken("list token was expired");
    if (prev.u !== userId || prev.a !== admin) {
      throw invalidListToken("grants have changed since list token was issued");
    }
    if (prev.r !== req.resource || prev.q !== queryHash) {
      throw invalidListToken("list token was issued for a different query");
    }
    if (prev.done) {
      token = { ...prev, ph: "r", pv: prev.ps, ps: now, done: false };
      delete token.lk;
      delete token.pvi;
      if (prev.pi !== undefined && req.changedSince) token = { ...token, pvi: prev.pi, pi: phaseIndex };
      firstRefreshPage = true;
    } else token = prev;
  } else {
    token = { r: req.resource, cs: now, u: userId, a: admin, q: queryHash, ph: "i", ps: now, done: false };
    if (phaseIndex !== undefined) token.pi = phaseIndex;
  }

  const refresh = token.ph === "r";
  const snapshotKey = `${queryHash}\u0000${userId}\u0000${admin}`;
  let snapshot = req.cache.get(snapshotKey);
  // A refresh reads only what changed; bringing the whole sorted snapshot up to date is left to the next
  // full listing (a refresh after many changes would otherwise pay for splicing each into 10,000 entries).
  if (snapshot && snapshot.generation !== req.generation) {
    snapshot = !refresh && req.incremental ? advanceSnapshot(snapshot, req, filter) : undefined;
  }
  let visible: Entry[];
  let estimate: number;
  const removed: string[] = [];
  if (!refresh) {
    snapshot ??= fullListing(req, filter, snapshotKey);
    visible = snapshot.sorted;
    estimate = snapshot.estimate;
  } else {
    // Only items changed since the previous phase are rendered and filtered.
    const since = new Date(token.pv ?? 0).toISOString();
    visible = [];
    let delta = 0;
    // By commit index when the token carries one (exact), else by updated_time (tokens from before).
    const afterIndex = req.changedSince && token.pvi !== undefined ? token.pvi : undefined;
    const changed = afterIndex !== undefined ? req.changedSince!.updated(afterIndex) : req.candidates;
    for (const stored of changed) {
      if (afterIndex === undefined && stored.doc.updated_time < since) continue;
      const item = req.render(stored);
      if (item !== undefined && (!filter || evaluateFilter(filter, { item }))) {
        visible.push({ key: entryKey(stored.doc.updated_time, stored.id), item });
        if (stored.doc.created_time >= since) delta++;
      } else if (firstRefreshPage) {
        removed.push(stored.id);
        delta--;
      }
    }
    if (firstRefreshPage) {
      const tombstones = afterIndex !== undefined ? req.changedSince!.deleted(afterIndex) : req.tombstones;
      for (const t of tombstones) {
        if (afterIndex !== undefined || t.doc.deleted_time >= since) {
          removed.push(t.id);
          delta--;
        }
      }
    }
    visible.sort(byKeyDesc);
    estimate = snapshot?.estimate ??
      Math.max(visible.length, (token.e ?? 0) + (firstRefreshPage ? delta : 0));
  }
  const start = token.lk ? firstAfter(visible, token.lk) : 0;
  const rest = visible.slice(start);
  const page = rest.slice(0, pageSize);
  const more = rest.length > page.length;
  const last = page[page.length - 1];
  const next: TokenBody = { ...token, done: !more, e: estimate };
  if (more && last) next.lk = last.key.split("\u0000") as [string, string];
  else delete next.lk;

  const body: Record<string, unknown> = {};
  if (page.length) body.items = page.map((p) => p.item);
  body.response_type = more ? "delta" : "complete";
  const emptyInitial = !rawToken && page.length === 0;
  if (!emptyInitial) body.list_token = encodeToken(req.keys, next);
  body.sort_by = refresh ? "updated_time" : "created_time";
  body.sort_dir = "desc";
  if (removed.length) body.removed_ids = [...new Set(removed)].sort();
  if (estimate) body.est_item_count = estimate;
  return body;
}

function byKeyDesc(x: Entry, y: Entry): number {
  return x.key < y.key ? 1 : x.key > y.key ? -1 : 0;
}

/** Index of the first entry after `key` in a descending list (binary search). */
function firstAfter(sorted: Entry[], last: [string, string]): number {
  const key = entryKey(last[0], last[1]);
  let lo = 0;
  let hi = sorted.length;
  while (lo < hi) {
    const mid = (lo + hi) >> 1;
    if (sorted[mid]!.key < key) hi = mid;
    else lo = mid + 1;
  }
  return lo;
}

/** Filter results by rendered item (rendered items are cached per stored version, so identity is stable). */
const filterMemo = new WeakMap<object, Map<string, boolean>>();

function matchesMemo(filter: Expr, text: string, item: Record<string, unknown>): boolean {
  let m = filterMemo.get(item);
  if (!m || m.size > 8) filterMemo.set(item, m = new Map());
  let r = m.get(text);
  if (r === undefined) m.set(text, r = evaluateFilter(filter, { item }));
  return r;
}

/** Renders, filters and sorts every candidate; remembered for the next pages of the same query. */
function fullListing<T extends Timed>(req: ListRequest<T>, filter: Expr | undefined, key: string): Snapshot {
  const sorted: Entry[] = [];
  const filterText = req.url.searchParams.get("filter") ?? "";
  for (const stored of req.candidates) {
    const item = req.render(stored);
    if (item !== undefined && (!filter || matchesMemo(filter, filterText, item))) {
      sorted.push({ key: entryKey(stored.doc.created_time, stored.id), item });
    }
  }
  sorted.sort(byKeyDesc);
  const keys = new Map(sorted.map((e) => [e.key.slice(e.key.indexOf("\u0000") + 1), e.key]));
  const snapshot = { generation: req.generation, sorted, keys, estimate: sorted.length };
  req.cache.delete(key);
  req.cache.set(key, snapshot);
  if (req.cache.size > maxSnapshots) req.cache.delete(req.cache.keys().next().value!);
  return snapshot;
}

/** Position of `key` (or where it would go) in a descending list. */
function positionOf(sorted: Entry[], key: string): number {
  let lo = 0;
  let hi = sorted.length;
  while (lo < hi) {
    const mid = (lo + hi) >> 1;
    if (sorted[mid]!.key > key) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

/** Applies the documents changed since the snapshot was made; undefined when it must be rebuilt. */
function advanceSnapshot<T extends Timed>(
  snapshot: Snapshot,
  req: ListRequest<T>,
  filter: Expr | undefined,
): Snapshot | undefined {
  const ids = req.incremental!.changesSince(snapshot.generation);
  if (!ids) return undefined;
  const filterText = req.url.searchParams.get("filter") ?? "";
  for (const id of new Set(ids)) {
    const old = snapshot.keys.get(id);
    if (old !== undefined) {
      const at = positionOf(snapshot.sorted, old);
      if (snapshot.sorted[at]?.key === old) snapshot.sorted.splice(at, 1);
      snapshot.keys.delete(id);
    }
    const stored = req.incremental!.lookup(id);
    if (!stored || !req.incremental!.accepts(stored)) continue;
    const item = req.render(stored);
    if (item === undefined || (filter && !matchesMemo(filter, filterText, item))) continue;
    const key = entryKey(stored.doc.created_time, stored.id);
    snapshot.sorted.splice(positionOf(snapshot.sorted, key), 0, { key, item });
    snapshot.keys.set(id, key);
  }
  snapshot.generation = req.generation;
  snapshot.estimate = snapshot.sorted.length;
  return snapshot;
}

const itemJson = new WeakMap<object, string>();

/**
 * Serializes a list envelope; each item's JSON is remembered per rendered item (stable per stored
 * version), so a page of 1,000 records costs a join rather than a full stringify.
 */
export function listResponse(body: Record<string, unknown>): Response {
  const items = body.items as Array<Record<string, unknown>> | undefined;
  if (!items) return json(body);
  const parts: string[] = [];
  for (const item of items) {
    let text = itemJson.get(item);
    if (text === undefined) itemJson.set(item, text = JSON.stringify(item));
    parts.push(text);
  }
  const { items: _items, ...rest } = body;
  const tail = JSON.stringify(rest).slice(1);
  const text = `{"items":[${parts.join(",")}]${tail === "}" ? "}" : `,${tail}`}`;
  return new Response(text, { headers: { "Content-Type": "application/json" } });
}
