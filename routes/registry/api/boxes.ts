// Boxes: GET/PUT/DELETE /api/v1/box/:username/:name and POST /api/v1/boxes.

import { json } from "../../../lib/http.ts";
import type { StoredDoc } from "../../../lib/store/mod.ts";
import type { Req } from "./auth.ts";
import { readPayload } from "./body.ts";
import type { BoxDoc } from "../core/model.ts";
import { boxJson, renderBox } from "../core/render.ts";
import { jsonText } from "./respond.ts";
import * as boxes from "../services/boxes.ts";
import type { VisibleBox } from "../services/boxes.ts";

/** The box named by the path, visible to the caller (404 otherwise), and whether the caller is an insider. */
export function visibleBox(req: Req): VisibleBox {
  return boxes.visibleBox(req, req.ctx.params.username ?? "", req.ctx.params.name ?? "");
}

/** The box named by the path, for a write: visible, writable, solvent. */
export function writableBox(req: Req): StoredDoc<BoxDoc> {
  return boxes.writableBox(req, req.ctx.params.username ?? "", req.ctx.params.name ?? "");
}

export const ownerView = boxes.ownerView;

export function getBox(req: Req): Response {
  const { box, insider } = visibleBox(req);
  return jsonText(boxJson({ reg: req.reg, origin: req.origin, insider, api: req.api }, box));
}

export async function createBox(req: Req): Promise<Response> {
  const body = await readPayload(req, "box");
  return json(renderBox(ownerView(req), await boxes.createBox(req, body), true));
}

export async function updateBox(req: Req): Promise<Response> {
  const body = await readPayload(req, "box");
  const { username = "", name = "" } = req.ctx.params;
  return json(renderBox(ownerView(req), await boxes.updateBox(req, username, name, body), true));
}

export async function deleteBox(req: Req): Promise<Response> {
  const { username = "", name = "" } = req.ctx.params;
  return json(await boxes.deleteBox(req, username, name, (box) => renderBox(ownerView(req), box, true)));
}
