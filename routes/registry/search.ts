// GET /api/v1/search (§6.4): boxes with a current version the caller may see, filtered, sorted, paged.
// The searchable set and its created/updated orders are cached until the next box change.

import { json } from "../../lib/http.ts";
import type { StoredDoc } from "../../lib/store/mod.ts";
import { isInsider, type Req } from "./auth.ts";
import { unprocessable } from "./errors.ts";
import { type BoxDoc, providerIsValid } from "./model.ts";
import { boxPath, currentVersion, renderBox } from "./render.ts";
import type { Registry } from "./state.ts";

const sortKeys = ["downloads", "created", "updated"] as const;

interface Entry {
  box: StoredDoc<BoxDoc>;
  tag: string;
  /** Lowercase username, name, tag and short description, for `q`. */
  haystack: string[];
  /** Names of the current version's valid providers. */
  providers: Set<string>;
}

interface SearchIndex {
  generation: number;
  /** By tag. */
  entries: Entry[];
  created: Entry[];
  updated: Entry[];
}

const indexes = new WeakMap<Registry, SearchIndex>();

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
    entries.push({
      box,
      tag,
      haystack: [owner, box.doc.name, tag, box.doc.short_description ?? ""].map((s) => s.toLowerCase()),
      providers: new Set(current.providers.filter(providerIsValid).map((p) => p.name)),
    });
  }
  entries.sort(byTag);
  const order = (field: "created_at" | "updated_at") =>
    [...entries].sort((a, b) =>
      a.box.doc[field] < b.box.doc[field] ? -1 : a.box.doc[field] > b.box.doc[field] ? 1 : byTag(a, b)
    );
  const index = {
    generation: reg.boxGeneration,
    entries,
    created: order("created_at"),
    updated: order("updated_at"),
  };
  indexes.set(reg, index);
  return index;
}

function positiveInt(raw: string | null, fallback: number, label: string, errors: string[]): number {
  if (raw === null || raw.trim() === "") return fallback;
  if (!/^\s*[0-9]+\s*$/.test(raw) || Number(raw) < 1 || !Number.isSafeInteger(Number(raw))) {
    errors.push(`${label} must be an integer of at least 1`);
    return fallback;
  }
  return Number(raw);
}

export function search(req: Req): Response {
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
  if (errors.length) throw unprocessable(errors);
  const q = (params.get("q") ?? "").trim().toLowerCase();
  const provider = (params.get("provider") ?? "").trim();
  const reg = req.reg;
  const index = searchIndex(reg);
  const visible = (e: Entry) =>
    (!e.box.doc.private || isInsider(reg, req.caller, e.box.doc.owner)) &&
    (!q || e.haystack.some((f) => f.includes(q))) &&
    (!provider || e.providers.has(provider));
  let hits: Entry[];
  if (sort === "downloads") {
    // Download counts change without a box write, so this order is computed per request.
    const counted = index.entries.filter(visible).map((e) => ({ e, n: reg.downloads.get(e.box.id) }));
    counted.sort((a, b) => a.n !== b.n ? (a.n - b.n) * (order === "asc" ? 1 : -1) : byTag(a.e, b.e));
    hits = counted.map((c) => c.e);
  } else {
    const ordered = sort === "created" ? index.created : index.updated;
    hits = (order === "asc"
      ? ordered
      : reverseKeepingTies(ordered, sort === "created" ? "created_at" : "updated_at"))
      .filter(visible);
  }
  const view = { reg, origin: req.origin, insider: false };
  const boxes = hits.slice((page - 1) * limit, page * limit).map((h) => renderBox(view, h.box, false));
  return json({ boxes });
}

/** Descending by `field`, ties still by ascending tag. */
function reverseKeepingTies(ordered: Entry[], field: "created_at" | "updated_at"): Entry[] {
  const out: Entry[] = [];
  let end = ordered.length;
  while (end > 0) {
    let start = end - 1;
    while (start > 0 && ordered[start - 1]!.box.doc[field] === ordered[end - 1]!.box.doc[field]) start--;
    out.push(...ordered.slice(start, end));
    end = start;
  }
  return out;
}
