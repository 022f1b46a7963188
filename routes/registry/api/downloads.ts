// What `vagrant box add` reads (§9, v2 §3): box metadata at /:user/:box (each name's default architecture) and
// /api/v2/vagrant/:user/:box (every architecture), and the provider files at
// /:user/boxes/:box/versions/:version/providers/:provider.box (the default architecture) and
// …/providers/:provider/:architecture/vagrant.box (hosted with Range, or a redirect).

import { StorageUnavailableError } from "../../../lib/store/mod.ts";
import { headerSafeUrl } from "../../../lib/urls.ts";
import type { Req } from "./auth.ts";
import { notFound } from "../core/errors.ts";
import { type BoxDoc, type ProviderDoc, providerIsValid, type VersionDoc } from "../core/model.ts";
import { cachedJson, downloadUrl, markdownHtml, sortedVersions, type View } from "../core/render.ts";
import { defaultProvider, providerIn } from "../core/architectures.ts";
import { isValidBoxName, namespacePattern } from "../core/rules.ts";
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
const metadataBodies = { 1: new WeakMap<BoxDoc, MetadataBody>(), 2: new WeakMap<BoxDoc, MetadataBody>() };

export function boxMetadata(req: Req): Response {
  const { username = "", name = "" } = req.ctx.params;
  const { box } = visibleBox(req);
  const doc = box.doc;
  const bodies = metadataBodies[req.api];
  let last = bodies.get(doc);
  // A repeated request (same spelling, same origin) is answered with the body already built for it, its names
  // already checked.
  if (last === undefined || last.name !== name || last.username !== username || last.origin !== req.origin) {
    checkNames(req);
    // `name` echoes the request's spelling (D11); the rest is shared by every spelling.
    const body = `{"name":${JSON.stringify(`${username}/${name}`)},${metadataRest(req, doc)}`;
    bodies.set(doc, last = { origin: req.origin, username, name, body });
  }
  return jsonText(last.body, doc.private ? "private, no-store" : "no-cache");
}

/**
 * The providers a metadata document lists: v2 every valid one, one entry per (name, architecture); the root URL
 * one per name, its default architecture (when valid), as v1 answers show it.
 */
function listedProviders(api: 1 | 2, v: VersionDoc): ProviderDoc[] {
  if (api === 2) return v.providers.filter(providerIsValid);
  return v.providers.filter((p) => p.default_architecture && providerIsValid(p));
}

function metadataProvider(view: View, doc: BoxDoc, v: VersionDoc, p: ProviderDoc) {
  const checksum = p.checksum && p.checksum_type
    ? { checksum: p.checksum, checksum_type: p.checksum_type }
    : p.blob
    ? { checksum: p.blob.sha256, checksum_type: "sha256" }
    : { checksum: null, checksum_type: null };
  return {
    name: p.name,
    url: downloadUrl(view, doc, v, p),
    ...checksum,
    // Also on the root URL's entries: Vagrant 2.4 reading it still refuses a box built for another architecture.
    architecture: p.architecture,
    default_architecture: p.default_architecture,
  };
}

/** The metadata after its `name` member (without the opening brace), cached per document version, API and origin. */
function metadataRest(req: Req, doc: BoxDoc): string {
  return cachedJson(doc, `metadata-rest|${req.api}|${req.origin}`, () => {
    const view = { reg: req.reg, origin: req.origin, insider: false, api: req.api };
    const versions = sortedVersions(doc).filter((v) => v.status === "active").map((v) => {
      const providers = listedProviders(req.api, v).map((p) => metadataProvider(view, doc, v, p));
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
  const { provider: name = "", architecture } = req.ctx.params;
  // The v1 URL (…/:provider.box) serves the name's default architecture.
  const provider = architecture === undefined
    ? defaultProvider(version, name)
    : providerIn(version, name, architecture);
  if (!provider || !providerIsValid(provider)) throw notFound();
  const isGet = req.ctx.request.method === "GET";
  if (provider.blob === null) {
    // Stored before URLs were kept canonical, a URL may hold what a header cannot (docs/security.md).
    const location = headerSafeUrl(provider.url!);
    if (location === undefined) throw notFound();
    if (isGet) req.reg.countDownload(box.id);
    return new Response(null, { status: 302, headers: { Location: location, "Cache-Control": "no-store" } });
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
    if (err instanceof StorageUnavailableError) throw err;
    throw notFound();
  }
  // A 302 hands the file out (a presigned URL of the object store): it counts like the answer it stands for, a
  // whole file or a range from byte 0, never a resume further in.
  const range = req.ctx.request.headers.get("Range");
  const fromStart = response.status === 200 ||
    (response.status === 302 && (range === null || /^\s*bytes\s*=\s*0\s*-/i.test(range))) ||
    (response.status === 206 && /^bytes 0-/.test(response.headers.get("Content-Range") ?? ""));
  if (isGet && fromStart) req.reg.countDownload(box.id);
  return response;
}
