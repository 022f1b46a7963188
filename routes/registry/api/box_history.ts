// GET|PUT /api/v1/admin/boxes/:username/:name/history (and /api/v2): a box's imported download count and
// times, for administrators (services/box_history.ts).

import { json } from "../../../lib/http.ts";
import type { StoredDoc } from "../../../lib/store/mod.ts";
import { type Req } from "./auth.ts";
import { readPayload } from "./body.ts";
import type { BoxDoc } from "../core/model.ts";
import { boxPath } from "../core/render.ts";
import * as history from "../services/box_history.ts";

export function renderHistory(req: Req, stored: StoredDoc<BoxDoc>) {
  const box = stored.doc;
  return {
    tag: boxPath(req.reg, box),
    downloads: req.reg.boxDownloads(stored),
    downloads_imported: typeof box.downloads_imported === "number" ? box.downloads_imported : null,
    created_at: box.created_at,
    updated_at: box.updated_at,
    versions: box.versions.map((v) => ({
      version: v.version,
      created_at: v.created_at,
      updated_at: v.updated_at,
      providers: v.providers.map((p) => ({
        name: p.name,
        architecture: p.architecture,
        created_at: p.created_at,
        updated_at: p.updated_at,
      })),
    })),
  };
}

export function getHistory(req: Req): Response {
  const { username = "", name = "" } = req.ctx.params;
  return json(renderHistory(req, history.historyBox(req, username, name)));
}

export async function putHistory(req: Req): Promise<Response> {
  const body = await readPayload(req, "history");
  const { username = "", name = "" } = req.ctx.params;
  return json(renderHistory(req, await history.putHistory(req, username, name, body)));
}
