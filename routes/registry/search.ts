// GET /api/v1/search (§6.4): boxes with a current version the caller may see, filtered, sorted, paged.

import { json } from "../../lib/http.ts";
import type { StoredDoc } from "../../lib/store/mod.ts";
import { isInsider, type Req } from "./auth.ts";
import { unprocessable } from "./errors.ts";
import { type BoxDoc, providerIsValid } from "./model.ts";
import { boxPath, currentVersion, renderBox } from "./render.ts";

const sortKeys = ["downloads", "created", "updated"] as const;

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
  const hits: { box: StoredDoc<BoxDoc>; tag: string; downloads: number }[] = [];
  for (const box of reg.allBoxes()) {
    const current = currentVersion(box.doc);
    if (!current) continue;
    if (box.doc.private && !isInsider(reg, req.caller, box.doc.owner)) continue;
    const tag = boxPath(reg, box.doc);
    if (q) {
      const fields = [
        reg.namespaceName(box.doc.owner) ?? "",
        box.doc.name,
        tag,
        box.doc.short_description ?? "",
      ];
      if (!fields.some((f) => f.toLowerCase().includes(q))) continue;
    }
    if (provider && !current.providers.some((p) => p.name === provider && providerIsValid(p))) continue;
    hits.push({ box, tag, downloads: reg.downloads.get(box.id) });
  }
  const key = (h: (typeof hits)[number]): number | string =>
    sort === "downloads" ? h.downloads : sort === "created" ? h.box.doc.created_at : h.box.doc.updated_at;
  const direction = order === "asc" ? 1 : -1;
  hits.sort((a, b) => {
    const x = key(a);
    const y = key(b);
    if (x !== y) return (x < y ? -1 : 1) * direction;
    return a.tag < b.tag ? -1 : a.tag > b.tag ? 1 : 0;
  });
  const view = { reg, origin: req.origin, insider: false };
  const boxes = hits.slice((page - 1) * limit, page * limit).map((h) => renderBox(view, h.box, false));
  return json({ boxes });
}
