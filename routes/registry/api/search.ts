// GET /api/v1/search and /api/v2/search: one page of a search (services/search.ts) as the API's JSON text.

import type { Req } from "./auth.ts";
import { searchInput, searchRendered } from "../services/search.ts";
import { jsonText } from "./respond.ts";

export function search(req: Req): Response {
  const href = req.ctx.request.url;
  const rawQuery = href.slice(href.indexOf("?") >>> 0);
  return jsonText(searchRendered(req, rawQuery, () => searchInput(req.ctx.url.searchParams)));
}
