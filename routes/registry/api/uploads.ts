// Uploads (docs/registry.md#uploads-and-limits): prepare standard and direct uploads (services/uploads.ts), the
// unauthenticated PUT of the bytes and the direct-upload callback (services/upload_transfers.ts).

import { json } from "../../../lib/http.ts";
import { type Req } from "./auth.ts";
import { renderProvider } from "../core/render.ts";
import { ownerView } from "../services/boxes.ts";
import type { ProviderRecord } from "../services/providers.ts";
import { providerPath } from "./providers.ts";
import * as upload from "../services/uploads.ts";
import { type Mode, Uploads } from "../services/uploads.ts";
import { completeDirectUpload, receiveUpload as receiveFile } from "../services/upload_transfers.ts";

function answer(req: Req, r: ProviderRecord): Response {
  return json(renderProvider(ownerView(req), r.box, r.version, r.provider));
}

export function prepareUpload(uploads: Uploads, mode: Mode) {
  return async (req: Req): Promise<Response> => {
    return json(await upload.prepareUpload(req, uploads, providerPath(req), mode));
  };
}

export function receiveUpload(uploads: Uploads) {
  return async (req: Req): Promise<Response> => {
    const file = {
      // Taken once the upload is checked: a body touched but never read would hold the connection.
      body: () => req.ctx.request.body,
      declaredLength: req.ctx.request.headers.get("Content-Length"),
    };
    return answer(req, await receiveFile(req, uploads, req.ctx.params.id ?? "", file));
  };
}

export function uploadCallback(uploads: Uploads) {
  return async (req: Req): Promise<Response> => {
    return answer(req, await completeDirectUpload(req, uploads, providerPath(req), req.ctx.params.id ?? ""));
  };
}
