// GET /api/v1/user/:username: a user or organization with every box the caller may see
// (services/namespaces.ts).

import { type Req } from "./auth.ts";
import { boxJson, markdownHtml } from "../core/render.ts";
import { namespace } from "../services/namespaces.ts";
import { jsonText } from "./respond.ts";

export function getNamespace(req: Req): Response {
  const ns = namespace(req, req.ctx.params.username ?? "");
  const view = { reg: req.reg, origin: req.origin, insider: ns.insider, api: req.api };
  // The boxes are spliced in as the cached JSON text the search answers also use.
  const head = JSON.stringify({
    username: ns.username,
    avatar_url: null,
    profile_html: markdownHtml(ns.profile),
    profile_markdown: ns.profile,
  });
  return jsonText(
    `${head.slice(0, -1)},"boxes":[${ns.boxes.map((b) => boxJson(view, b, false)).join(",")}]}`,
  );
}
