// Static assets served by wharf itself under content-hashed names (/ui/assets/console.<hash>.css) with
// year-long immutable caching: a changed file gets a new name, so no build step and no stale cache.

import { sha256Hex } from "../../lib/crypto.ts";
import { consoleCss } from "./assets_css.ts";
import { consoleJs } from "./assets_js.ts";

const iconSvg =
  `<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 32 32"><rect width="32" height="32" rx="6" ` +
  `fill="#0d2b45"/><path d="M7 10h18v12H7z" fill="none" stroke="#fff" stroke-width="2.5"/>` +
  `<path d="M7 14h18" stroke="#f2a900" stroke-width="2.5"/></svg>`;

interface Asset {
  path: string;
  body: string;
  type: string;
}

function hashed(name: string, ext: string, body: string, type: string): Asset {
  return { path: `/ui/assets/${name}.${sha256Hex(body).slice(0, 16)}.${ext}`, body, type };
}

export const assets = {
  css: hashed("console", "css", consoleCss, "text/css; charset=utf-8"),
  js: hashed("console", "js", consoleJs, "text/javascript; charset=utf-8"),
  icon: hashed("icon", "svg", iconSvg, "image/svg+xml"),
};

const byPath = new Map(Object.values(assets).map((a) => [a.path, a]));

/** The asset at `path`, or undefined (an old hash is gone: 404). */
export function serveAsset(path: string): Response | undefined {
  const asset = byPath.get(path);
  if (!asset) return undefined;
  return new Response(asset.body, {
    headers: {
      "Content-Type": asset.type,
      "Cache-Control": "public, max-age=31536000, immutable",
      "X-Content-Type-Options": "nosniff",
    },
  });
}
