// GET /api/v1/user/:username: a user or organization with every box the caller may see (§6.2).

import { type Req } from "./auth.ts";
import { isInsider } from "../core/caller.ts";
import { notFound } from "../core/errors.ts";
import { boxJson, markdownHtml } from "../core/render.ts";
import { jsonText } from "./respond.ts";

export function getNamespace(req: Req): Response {
  const reg = req.reg;
  const key = (req.ctx.params.username ?? "").toLowerCase();
  const user = reg.user(key)?.doc;
  const org = user ? undefined : reg.org(key)?.doc;
  if (!user && !org) throw notFound();
  const insider = isInsider(reg, req.caller, key);
  const view = { reg, origin: req.origin, insider, api: req.api };
  const boxes = reg.boxesOf(key)
    .filter((b) => insider || !b.doc.private)
    .sort((a, b) => a.doc.name.toLowerCase() < b.doc.name.toLowerCase() ? -1 : 1)
    .map((b) => boxJson(view, b, false));
  const profile = user ? user.profile : org!.profile;
  // The boxes are spliced in as the cached JSON text the search answers also use.
  const head = JSON.stringify({
    username: user ? user.username : org!.name,
    avatar_url: null,
    profile_html: markdownHtml(profile),
    profile_markdown: profile,
  });
  return jsonText(`${head.slice(0, -1)},"boxes":[${boxes.join(",")}]}`);
}
