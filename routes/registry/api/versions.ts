// Versions: GET/PUT/DELETE …/version/:version, POST …/versions, PUT …/release and …/revoke, over
// services/versions.ts.

import { json } from "../../../lib/http.ts";
import type { StoredDoc } from "../../../lib/store/mod.ts";
import type { BoxDoc, VersionDoc } from "../core/model.ts";
import { renderVersion } from "../core/render.ts";
import { ownerView } from "../services/boxes.ts";
import * as versions from "../services/versions.ts";
import type { VersionCommitOutcome, VersionPath, VersionRecord } from "../services/versions.ts";
import type { Req } from "./auth.ts";
import { readPayload } from "./body.ts";

/** The version the path names. */
export function versionPath(req: Req): VersionPath {
  const p = req.ctx.params;
  return { owner: p.username ?? "", box: p.name ?? "", version: p.version ?? "" };
}

/** The version named by the path (exact string), visible to the caller. */
export function visibleVersion(req: Req): { box: StoredDoc<BoxDoc>; version: VersionDoc; insider: boolean } {
  return versions.visibleVersion(req, versionPath(req));
}

/** Commits `change` under the path's version; its result is the JSON answer. */
export async function commitToVersion(
  req: Req,
  change: (box: BoxDoc, version: VersionDoc) => VersionCommitOutcome<unknown>,
): Promise<Response> {
  return json(await versions.commitToVersion(req, versionPath(req), change));
}

function answer(req: Req, r: VersionRecord): Response {
  return json(renderVersion(ownerView(req), r.box, r.version));
}

export function getVersion(req: Req): Response {
  const { box, version, insider } = visibleVersion(req);
  return json(renderVersion({ reg: req.reg, origin: req.origin, insider, api: req.api }, box.doc, version));
}

export async function createVersion(req: Req): Promise<Response> {
  const body = await readPayload(req, "version");
  const { username = "", name = "" } = req.ctx.params;
  return answer(req, await versions.createVersion(req, username, name, body));
}

export async function updateVersion(req: Req): Promise<Response> {
  const body = await readPayload(req, "version");
  return answer(req, await versions.updateVersion(req, versionPath(req), body));
}

export async function releaseVersion(req: Req): Promise<Response> {
  return answer(req, await versions.releaseVersion(req, versionPath(req)));
}

export async function revokeVersion(req: Req): Promise<Response> {
  return answer(req, await versions.revokeVersion(req, versionPath(req)));
}

export async function deleteVersion(req: Req): Promise<Response> {
  return answer(req, await versions.deleteVersion(req, versionPath(req)));
}
