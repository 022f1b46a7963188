// Searching boxes (docs/registry.md#vagrant-24): boxes with a current version the caller may see, filtered
// (q, provider, architecture), sorted, paged. As records (`searchBoxes`, the web console) or as the API's
// JSON text (`searchRendered`): the searchable set and its orders are cached until the next box change,
// finished answers and result pages until the next download.

import type { StoredDoc } from "../../../lib/store/mod.ts";
import { isInsider } from "../core/caller.ts";
import { unprocessable } from "../core/errors.ts";
import { type BoxDoc, providerIsValid } from "../core/model.ts";
import { boxJson, boxPath, currentVersion } from "../core/render.ts";
import type { Actor, Registry } from "../core/registry.ts";
import { INVALID_ARCHITECTURE, isArchitecture } from "../core/architectures.ts";

const sortKeys = ["downloads", "created", "updated"] as const;

interface Entry {
  box: StoredDoc<BoxDoc>;
  tag: string;
  /** Lowercase username, name, tag and short description, for `q`. */
  haystack: string[];
  /** Names of the current version's valid providers. */
  providers: Set<string>;
  /** Their architectures, and their (name, architecture) pairs as `name/architecture`. */
  architectures: Set<string>;
  pairs: Set<string>;
}

interface SearchIndex {
  generation: number;
  /** By tag. */
  entries: Entry[];
  /** Orders by sort key and direction (ties by tag), built on first use. */
  orders: Map<string, Entry[]>;
  /** When, and at which download count generation, the download orders were computed. */
  downloadsAt: number;
  downloadsSeen: number;
}

/** Entries matching (q, provider, architecture) per ordered list; a new list (box change, re-sort) starts afresh. */
const matches = new WeakMap<Entry[], Map<string, Entry[]>>();
const MATCH_CACHE_QUERIES = 256;

/** With both a provider and an architecture, one provider must match both. */
function providerMatches(e: Entry, provider: string, architecture: string): boolean {
  if (provider && architecture) return e.pairs.has(`${provider}/${architecture}`);
  return (!provider || e.providers.has(provider)) && (!architecture || e.architectures.has(architecture));
}

function matching(list: Entry[], q: string, provider: string, architecture: string): Entry[] {
  if (!q && !provider && !architecture) return list;
  let byQuery = matches.get(list);
  if (!byQuery) matches.set(list, byQuery = new Map());
  const key = `${q}\u0000${provider}\u0000${architecture}`;
  let found = byQuery.get(key);
  if (!found) {
    found = list.filter((e) =>
      (!q || e.haystack.some((f) => f.includes(q))) && providerMatches(e, provider, architecture)
    );
    if (byQuery.size >= MATCH_CACHE_QUERIES) byQuery.delete(byQuery.keys().next().value!);
    byQuery.set(key, found);
  }
  return found;
}

const indexes = new WeakMap<Registry, SearchIndex>();
/** How stale the by-downloads order may get. */
const DOWNLOADS_ORDER_MS = 1000;

function byTag(a: Entry, b: Entry): number {
  return a.tag < b.tag ? -1 : a.tag > b.tag ? 1 : 0;
}

function searchIndex(reg: Registry): SearchIndex {
  const cached = indexes.get(reg);
  if (cached && cached.generation === reg.boxGeneration) return cached;
  const entries: Entry[] = [];
  for (const box of reg.allBoxes()) {
    const current = currentVersion(box.doc);
    if (!current) continue;
    const tag = boxPath(reg, box.doc);
    const owner = reg.namespaceName(box.doc.owner) ?? "";
    const valid = current.providers.filter(providerIsValid);
    entries.push({
      box,
      tag,
      haystack: [owner, box.doc.name, tag, box.doc.short_description ?? ""].map((s) => s.toLowerCase()),
      providers: new Set(valid.map((p) => p.name)),
      architectures: new Set(valid.map((p) => p.architecture)),
      pairs: new Set(valid.map((p) => `${p.name}/${p.architecture}`)),
    });
  }
  entries.sort(byTag);
  const index = {
    generation: reg.boxGeneration,
    entries,
    orders: new Map(),
    downloadsAt: 0,
    downloadsSeen: -1,
  };
  indexes.set(reg, index);
  return index;
}

/** The entries in `sort`/`order` order, ties by tag (stable sorts over the tag order). */
function ordered(reg: Registry, index: SearchIndex, sort: string, order: string): Entry[] {
  const key = `${sort}/${order}`;
  const stale = index.downloadsSeen !== reg.downloadGeneration &&
    Date.now() - index.downloadsAt > DOWNLOADS_ORDER_MS;
  if (sort === "downloads" && stale) {
    index.orders.delete("downloads/asc");
    index.orders.delete("downloads/desc");
    index.downloadsAt = Date.now();
    index.downloadsSeen = reg.downloadGeneration;
  }
  let list = index.orders.get(key);
  if (!list) {
    const sign = order === "asc" ? 1 : -1;
    if (sort === "downloads") {
      const counted = index.entries.map((e) => ({ e, n: reg.boxDownloads(e.box) }));
      counted.sort((a, b) => (a.n - b.n) * sign);
      list = counted.map((c) => c.e);
    } else {
      const field = sort === "created" ? "created_at" : "updated_at";
      list = [...index.entries].sort((a, b) =>
        a.box.doc[field] === b.box.doc[field] ? 0 : (a.box.doc[field] < b.box.doc[field] ? -1 : 1) * sign
      );
    }
    index.orders.set(key, list);
  }
  return list;
}

/** A query parameter read as an integer of at least 1 (`fallback` when absent); a message in `errors` else. */
export function positiveInt(raw: string | null, fallback: number, label: string, errors: string[]): number {
  if (raw === null || raw.trim() === "") return fallback;
  if (!/^\s*[0-9]+\s*$/.test(raw) || Number(raw) < 1 || !Number.isSafeInteger(Number(raw))) {
    errors.push(`${label} must be an integer of at least 1`);
    return fallback;
  }
  return Number(raw);
}

/** A search as sent: the query string's parameters, unchecked (absent ones null). */
export interface SearchInput {
  q: string | null;
  provider: string | null;
  architecture: string | null;
  sort: string | null;
  order: string | null;
  limit: string | null;
  page: string | null;
}

/** The parameters of a query string as a search's input. */
export function searchInput(params: URLSearchParams): SearchInput {
  return {
    q: params.get("q"),
    provider: params.get("provider"),
    architecture: params.get("architecture"),
    sort: params.get("sort"),
    order: params.get("order"),
    limit: params.get("limit"),
    page: params.get("page"),
  };
}

interface SearchQuery {
  q: string;
  provider: string;
  architecture: string;
  sort: string;
  order: string;
  limit: number;
  page: number;
}

/** The checked search (422 with one message per problem). */
function searchQuery(input: SearchInput): SearchQuery {
  const errors: string[] = [];
  const sort = input.sort || "downloads";
  if (!(sortKeys as readonly string[]).includes(sort)) {
    errors.push("Sort must be one of downloads, created, updated");
  }
  const order = input.order || "desc";
  if (order !== "desc" && order !== "asc") errors.push("Order must be desc or asc");
  const limit = Math.min(100, positiveInt(input.limit, 10, "Limit", errors));
  const page = positiveInt(input.page, 1, "Page", errors);
  const architecture = (input.architecture ?? "").trim();
  if (architecture && !isArchitecture(architecture)) errors.push(INVALID_ARCHITECTURE);
  if (errors.length) throw unprocessable(errors);
  const q = (input.q ?? "").trim().toLowerCase();
  const provider = (input.provider ?? "").trim();
  return { q, provider, architecture, sort, order, limit, page };
}

/**
 * The matching entries of the query's page the actor may see, and whether a private box was met on the way.
 */
function walkPage(actor: Actor, list: Entry[], query: SearchQuery): { page: Entry[]; sawPrivate: boolean } {
  const visible = (e: Entry) => !e.box.doc.private || isInsider(actor.reg, actor.caller, e.box.doc.owner);
  // Walk the ordered list only as far as the requested page.
  const skip = (query.page - 1) * query.limit;
  const page: Entry[] = [];
  let matched = 0;
  let sawPrivate = false;
  for (const e of list) {
    if (e.box.doc.private) sawPrivate = true;
    if (!visible(e)) continue;
    if (matched++ < skip) continue;
    page.push(e);
    if (page.length >= query.limit) break;
  }
  return { page, sawPrivate };
}

function orderedMatches(reg: Registry, query: SearchQuery): { index: SearchIndex; list: Entry[] } {
  const index = searchIndex(reg);
  const list = matching(
    ordered(reg, index, query.sort, query.order),
    query.q,
    query.provider,
    query.architecture,
  );
  return { index, list };
}

/** The boxes of one page of a search, as records. */
export function searchBoxes(actor: Actor, input: SearchInput): StoredDoc<BoxDoc>[] {
  const query = searchQuery(input);
  return walkPage(actor, orderedMatches(actor.reg, query).list, query).page.map((e) => e.box);
}

/** A finished answer by raw query string, valid while no box changed and no download was counted. */
interface Answered {
  boxGeneration: number;
  downloadGeneration: number;
  origin: string;
  text: string;
}

/** Repeated identical searches are answered before their query string is even parsed. */
const answered = new WeakMap<Registry, Map<string, Answered>>();
const ANSWERED_ENTRIES = 256;

/**
 * One page of a search as the API's JSON text (`{"boxes":[…]}` in the actor's API version). `rawQuery` is the
 * query string as sent (with its "?", or ""): the key of finished answers, checked before `input` is read.
 */
export function searchRendered(actor: Actor, rawQuery: string, input: () => SearchInput): string {
  const reg = actor.reg;
  // v1 and v2 render the same boxes differently: the API is part of the key.
  const answerKey = actor.api + rawQuery;
  const hit = answered.get(reg)?.get(answerKey);
  if (
    hit !== undefined && hit.boxGeneration === reg.boxGeneration &&
    hit.downloadGeneration === reg.downloadGeneration && hit.origin === actor.origin
  ) {
    return hit.text;
  }
  const query = searchQuery(input());
  const { index, list } = orderedMatches(reg, query);
  // Kept by raw query only when the order it used is current (a by-downloads order may lag up to a second)
  // and no token is in the query string (secrets stay out of cache keys).
  const remember = (text: string) => {
    if (query.sort === "downloads" && index.downloadsSeen !== reg.downloadGeneration) return;
    if (actor.caller.tokenPresent && rawQuery.includes("token")) return;
    let byQuery = answered.get(reg);
    if (!byQuery) answered.set(reg, byQuery = new Map());
    if (byQuery.size >= ANSWERED_ENTRIES) byQuery.delete(byQuery.keys().next().value!);
    byQuery.set(answerKey, {
      boxGeneration: reg.boxGeneration,
      downloadGeneration: reg.downloadGeneration,
      origin: actor.origin,
      text,
    });
  };
  // A page walked without meeting a private box reads the same for every caller: it is kept (per ordered
  // list, so any box change starts afresh) until a download changes the counts it shows.
  const { q, provider, architecture } = query;
  const pageKey =
    `${actor.api}|${query.page}|${query.limit}|${actor.origin}|${reg.downloadGeneration}|${q}\u0000${provider}\u0000${architecture}`;
  let pages = publicPages.get(list);
  const cached = pages?.get(pageKey);
  if (cached !== undefined) {
    remember(cached);
    return cached;
  }
  const { page, sawPrivate } = walkPage(actor, list, query);
  const view = { reg, origin: actor.origin, insider: false, api: actor.api };
  const text = `{"boxes":[${page.map((e) => boxJson(view, e.box, false)).join(",")}]}`;
  if (sawPrivate) return text;
  if (!pages) publicPages.set(list, pages = new Map());
  if (pages.size >= PAGE_CACHE_ENTRIES) pages.delete(pages.keys().next().value!);
  pages.set(pageKey, text);
  remember(text);
  return text;
}

/** Serialized result pages that contain and skip no private box, per ordered list. */
const publicPages = new WeakMap<Entry[], Map<string, string>>();
const PAGE_CACHE_ENTRIES = 256;
