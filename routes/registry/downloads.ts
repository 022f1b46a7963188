// What `vagrant box add` reads (§9): box metadata at /:user/:box and the provider files at
// /:user/boxes/:box/versions/:version/providers/:provider.box (hosted with Range, or a redirect).

import { ApiError } from "../../lib/errors.ts";
import type { Req } from "./auth.ts";
import { notFound } from "./errors.ts";
import { type BoxDoc, providerIsValid } from "./model.ts";
import { cachedJson, markdownHtml, renderProvider, sortedVersions } from "./render.ts";
import { isValidBoxName, namespacePattern } from "./rules.ts";
import { visibleBox } from "./boxes.ts";
import { jsonText } from "./respond.ts";

function checkNames(req: Req): void {
  const { username = "", name = "" } = req.ctx.params;
  if (!namespacePattern.test(username) || !isValidBoxName(name)) throw notFound();
}

/** The last metadata body sent for a stored box document: the origin and name spelling it was built for. */
interface MetadataBody {
  origin: string;
  username: string;
  name: string;
  body: string;
}

/**
 * Per stored document (immutable: a write stores a new object, so a write is seen by the next read). Only the
 * last spelling of the name is kept: letter-case variants replace each other here and evict nothing else.
 */
const metadataBodies = new WeakMap<BoxDoc, MetadataBody>();

export function boxMetadata(req: Req): Response {
  const { username = "", name = "" } = req.ctx.params;
  const { box } = visibleBox(req);
  const doc = box.doc;
  let last = metadataBodies.get(doc);
  // A repeated request (same spelling, same origin) is answered with the body already built for it, its names
  // already checked.
  if (last === undefined || last.name !== name || last.username !== username || last.origin !== req.origin) {
    checkNames(req);
    // `name` echoes the request's spelling (D11); the rest is shared by every spelling.
    const body = `{"name":${JSON.stringify(`${username}/${name}`)},${metadataRest(req, doc)}`;
    metadataBodies.set(doc, last = { origin: req.origin, username, name, body });
  }
  return jsonText(last.body, doc.private ? "private, no-store" : "no-cache");
}

/** The metadata after its `name` member (without the opening brace), cached per document version and origin. */
function metadataRest(req: Req, doc: BoxDoc): string {
  return cachedJson(doc, `metadata-rest|${req.origin}`, () => {
    const view = { reg: req.reg, origin: req.origin, insider: false };
    const versions = sortedVersions(doc).filter((v) => v.status === "active").map((v) => {
      const seen = new Set<string>();
      const providers = v.providers.filter((p) => providerIsValid(p) && !seen.has(p.name) && seen.add(p.name))
        .map(
          (p) => {
            const checksum = p.checksum && p.checksum_type
              ? { checksum: p.checksum, checksum_type: p.checksum_type }
              : p.blob
              ? { checksum: p.blob.sha256, checksum_type: "sha256" }
              : { checksum: null, checksum_type: null };
            return { name: p.name, url: renderProvider(view, doc, v, p).download_url, ...checksum };
          },
        );
      return {
        version: v.version,
        status: v.status,
        description_markdown: v.description,
        description_html: markdownHtml(v.description),
        providers,
      };
    });
    const text = JSON.stringify({
      description: doc.description ?? doc.short_description,
      short_description: doc.short_description,
      versions,
    });
    return text.slice(1);
  });
}

export async function downloadProvider(req: Req): Promise<Response> {
  checkNames(req);
  const { box, insider } = visibleBox(req);
  const version = box.doc.versions.find((v) => v.version === req.ctx.params.version);
  if (!version || (!insider && version.status !== "active")) throw notFound();
  const provider = version.providers.find((p) => p.name === req.ctx.params.provider);
  if (!provider || !providerIsValid(provider)) throw notFound();
  const isGet = req.ctx.request.method === "GET";
  if (provider.blob === null) {
    if (isGet) req.reg.countDownload(box.id);
    return new Response(null, {
      status: 302,
      headers: { Location: provider.url!, "Cache-Control": "no-store" },
    });
  }
  const headers: Record<string, string> = {
    "Last-Modified": new Date(provider.blob.uploaded_at).toUTCString(),
    "Cache-Control": box.doc.private ? "private, no-store" : "no-cache",
  };
  let response: Response;
  try {
    response = await req.reg.ctx.data.blobs.respond(provider.blob.sha256, req.ctx.request, headers, {
      redirect: true,
    });
  } catch (err) {
    // The object store unreachable is a 503 to retry, not a missing file.
    if (err instanceof ApiError && err.status === 503) throw err;
    throw notFound();
  }
  // A 302 hands the whole file out (a presigned URL of the object store): it counts as a download.
  const fromStart = response.status === 200 || response.status === 302 ||
    (response.status === 206 && /^bytes 0-/.test(response.headers.get("Content-Range") ?? ""));
  if (isGet && fromStart) req.reg.countDownload(box.id);
  return response;
}
