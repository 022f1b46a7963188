// GET /api/v1/search and /api/v2/search (§6.4, v2 §2): boxes with a current version the caller may see,
// filtered (q, provider, architecture), sorted, paged.
// The searchable set and its created/updated orders are cached until the next box change.

import type { StoredDoc } from "../../../lib/store/mod.ts";
import { type Req } from "./auth.ts";
import { isInsider } from "../core/caller.ts";
import { unprocessable } from "../core/errors.ts";
import { type BoxDoc, providerIsValid } from "../core/model.ts";
import { boxJson, boxPath, currentVersion } from "../core/render.ts";
import type { Registry } from "../core/registry.ts";
import { jsonText } from "./respond.ts";
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

function positiveInt(raw: string | null, fallback: number, label: string, errors: string[]): number {
  if (raw === null || raw.trim() === "") return fallback;
  if (!/^\s*[0-9]+\s*$/.test(raw) || Number(raw) < 1 || !Number.isSafeInteger(Number(raw))) {
    errors.push(`${label} must be an integer of at least 1`);
    return fallback;
  }
  return Number(raw);
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

export function search(req: Req): Response {
  const reg = req.reg;
  const href = req.ctx.request.url;
  const rawQuery = href.slice(href.indexOf("?") >>> 0);
  // v1 and v2 render the same boxes differently: the API is part of the key.
  const answerKey = req.api + rawQuery;
  const hit = answered.get(reg)?.get(answerKey);
  if (
    hit !== undefined && hit.boxGeneration === reg.boxGeneration &&
    hit.downloadGeneration === reg.downloadGeneration && hit.origin === req.origin
  ) {
    return jsonText(hit.text);
  }
  const params = req.ctx.url.searchParams;
  const errors: string[] = [];
  const sort = params.get("sort") || "downloads";
  if (!(sortKeys as readonly string[]).includes(sort)) {
    errors.push("Sort must be one of downloads, created, updated");
  }
  const order = params.get("order") || "desc";
  if (order !== "desc" && order !== "asc") errors.push("Order must be desc or asc");
  const limit = Math.min(100, positiveInt(params.get("limit"), 10, "Limit", errors));
  const page = positiveInt(params.get("page"), 1, "Page", errors);
  const architecture = (params.get("architecture") ?? "").trim();
  if (architecture && !isArchitecture(architecture)) errors.push(INVALID_ARCHITECTURE);
  if (errors.length) throw unprocessable(errors);
  const q = (params.get("q") ?? "").trim().toLowerCase();
  const provider = (params.get("provider") ?? "").trim();
  const index = searchIndex(reg);
  const list = matching(ordered(reg, index, sort, order), q, provider, architecture);
  // Kept by raw query only when the order it used is current (a by-downloads order may lag up to a second)
  // and no token is in the query string (secrets stay out of cache keys).
  const remember = (text: string) => {
    if (sort === "downloads" && index.downloadsSeen !== reg.downloadGeneration) return;
    if (req.caller.tokenPresent && rawQuery.includes("token")) return;
    let byQuery = answered.get(reg);
    if (!byQuery) answered.set(reg, byQuery = new Map());
    if (byQuery.size >= ANSWERED_ENTRIES) byQuery.delete(byQuery.keys().next().value!);
    byQuery.set(answerKey, {
      boxGeneration: reg.boxGeneration,
      downloadGeneration: reg.downloadGeneration,
      origin: req.origin,
      text,
    });
  };
  // A page walked without meeting a private box reads the same for every caller: it is kept (per ordered
  // list, so any box change starts afresh) until a download changes the counts it shows.
  const pageKey =
    `${req.api}|${page}|${limit}|${req.origin}|${reg.downloadGeneration}|${q}\u0000${provider}\u0000${architecture}`;
  let pages = publicPages.get(list);
  const cached = pages?.get(pageKey);
  if (cached !== undefined) {
    remember(cached);
    return jsonText(cached);
  }
  const visible = (e: Entry) => !e.box.doc.private || isInsider(reg, req.caller, e.box.doc.owner);
  // Walk the ordered list only as far as the requested page.
  const skip = (page - 1) * limit;
  const view = { reg, origin: req.origin, insider: false, api: req.api };
  const boxes: string[] = [];
  let matched = 0;
  let sawPrivate = false;
  for (const e of list) {
    if (e.box.doc.private) sawPrivate = true;
    if (!visible(e)) continue;
    if (matched++ < skip) continue;
    boxes.push(boxJson(view, e.box, false));
    if (boxes.length >= limit) break;
  }
  const text = `{"boxes":[${boxes.join(",")}]}`;
  if (sawPrivate) return jsonText(text);
  if (!pages) publicPages.set(list, pages = new Map());
  if (pages.size >= PAGE_CACHE_ENTRIES) pages.delete(pages.keys().next().value!);
  pages.set(pageKey, text);
  remember(text);
  return jsonText(text);
}

/** Serialized result pages that contain and skip no private box, per ordered list. */
const publicPages = new WeakMap<Entry[], Map<string, string>>();
const PAGE_CACHE_ENTRIES = 256;
