// What `vagrant box add` reads: box metadata at /:user/:box (each name's default architecture) and
// /api/v2/vagrant/:user/:box (every architecture), and the provider files at
// /:user/boxes/:box/versions/:version/providers/:provider.box (the default architecture) and
// …/providers/:provider/:architecture/vagrant.box (hosted with Range, or a redirect); the rules are
// services/downloads.ts.

import { StorageUnavailableError } from "../../../lib/store/mod.ts";
import { headerSafeUrl } from "../../../lib/urls.ts";
import type { Req } from "./auth.ts";
import { notFound } from "../core/errors.ts";
import * as downloads from "../services/downloads.ts";
import { jsonText } from "./respond.ts";

export function boxMetadata(req: Req): Response {
  const { username = "", name = "" } = req.ctx.params;
  const metadata = downloads.boxMetadata(req, username, name);
  return jsonText(metadata.text, metadata.private ? "private, no-store" : "no-cache");
}

export async function downloadProvider(req: Req): Promise<Response> {
  const { username = "", name = "", version = "", provider: providerName = "", architecture } =
    req.ctx.params;
  const { box, provider } = downloads.downloadable(req, {
    username,
    name,
    version,
    provider: providerName,
    architecture,
  });
  const isGet = req.ctx.request.method === "GET";
  if (provider.blob === null) {
    // Stored before URLs were kept canonical, a URL may hold what a header cannot (docs/security.md).
    const location = headerSafeUrl(provider.url!);
    if (location === undefined) throw notFound();
    if (isGet) req.reg.countDownload(box.id);
    const redirect = new Response(null, {
      status: 302,
      headers: { Location: location, "Cache-Control": "no-store" },
    });
    if (isGet) req.reg.metrics.downloadAnswered(redirect);
    return redirect;
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
  if (isGet) req.reg.metrics.downloadAnswered(response);
  return response;
}
