// Uploads (§8): prepare standard and direct uploads, the unauthenticated PUT of the bytes (streamed to
// the blob store), and the direct-upload callback. Upload sessions are durable documents keyed by a hash.

import { ApiError } from "../../../lib/errors.ts";
import { json } from "../../../lib/http.ts";
import { type DigestName, type StoredBlob, StoreError } from "../../../lib/store/mod.ts";
import { asApiError } from "../../../lib/store_http.ts";
import { type Req } from "./auth.ts";
import { requireSolvent, requireUser } from "../core/caller.ts";
import { notFound } from "../core/errors.ts";
import { providerEvent } from "../core/events.ts";
import { type BoxDoc, BOXES, type HostedFile, now } from "../core/model.ts";
import { renderProvider } from "../core/render.ts";
import { ownerView, writableBox } from "./boxes.ts";
import { currentBox } from "../services/boxes.ts";
import { findVersion } from "../services/versions.ts";
import { pathProvider, providerPath } from "./providers.ts";
import * as upload from "../services/uploads.ts";
import {
  type Mode,
  sessionProvider,
  sessionProviderOrNone,
  UPLOADS,
  Uploads,
  type UploadSession,
} from "../services/uploads.ts";
import { hashBlob } from "../services/providers.ts";
import { registryLock } from "../core/locks.ts";

function hostedFile(blob: StoredBlob): HostedFile {
  return { sha256: blob.sha256, size: blob.size, digests: { ...blob.digests }, uploaded_at: now() };
}

/**
 * Points the session's provider at `blob` and deletes the session, in one commit with its ProviderUploaded
 * event: a crash leaves either the session (the client retries) or the uploaded provider.
 */
async function commitUpload(req: Req, session: UploadSession, blob: StoredBlob, actor: string) {
  const reg = req.reg;
  const s = session.doc;
  // The session (consumed once) and the box's namespace (a box's owner never changes).
  const owner = reg.store.get<BoxDoc>(BOXES, s.box_id)?.doc.owner;
  if (owner === undefined) throw notFound();
  const keys = [registryLock.upload(session.hash), registryLock.namespace(owner)];
  return await reg.writeIn(keys, () => {
    if (!reg.store.get(UPLOADS, session.hash)) throw notFound();
    const box = currentBox(req.reg, s.box_id);
    const doc: BoxDoc = structuredClone(box.doc);
    const version = findVersion(doc, s.version);
    if (version.status === "revoked") throw new ApiError(422, `Version ${version.version} is revoked`);
    const provider = sessionProvider(version, s);
    if (provider.checksum && provider.checksum_type) {
      const actual = blob.digests[provider.checksum_type as DigestName];
      if (actual === undefined) {
        throw new ApiError(422, "The provider's checksum changed during the upload; upload again");
      }
      if (actual !== provider.checksum) {
        throw new ApiError(
          422,
          `Checksum mismatch: expected ${provider.checksum_type} ${provider.checksum}, got ${actual}`,
        );
      }
    }
    const t = now();
    provider.blob = hostedFile(blob);
    provider.url = null;
    provider.updated_at = t;
    version.updated_at = t;
    doc.updated_at = t;
    const view = ownerView(req);
    return {
      writes: [
        { collection: BOXES, id: box.id, doc, ifVersion: box.version },
        { collection: UPLOADS, id: session.hash, doc: null },
      ],
      events: [providerEvent("ProviderUploaded", view, doc, version, provider, actor, {
        size: blob.size,
        sha256: blob.sha256,
        mode: s.mode,
      })],
      result: renderProvider(view, doc, version, provider),
    };
  });
}

export function prepareUpload(uploads: Uploads, mode: Mode) {
  return async (req: Req): Promise<Response> => {
    return json(await upload.prepareUpload(req, uploads, providerPath(req), mode));
  };
}

export function receiveUpload(uploads: Uploads) {
  return async (req: Req): Promise<Response> => {
    const session = await uploads.lookup(req.ctx.params.id ?? "");
    const { hash, doc: s } = session;
    const box = currentBox(req.reg, s.box_id);
    requireSolvent(req, box.doc.owner);
    if (uploads.isStreaming(hash)) throw new ApiError(422, "Another upload to this URL is in progress");
    const declared = req.ctx.request.headers.get("Content-Length");
    const max = req.reg.settings.maxUploadBytes;
    if (declared !== null && Number(declared) > max) {
      throw new ApiError(413, `Upload too large: the limit is ${max} bytes`);
    }
    if (!req.ctx.request.body || declared === "0") throw new ApiError(422, "The uploaded file is empty");
    const provider = sessionProvider(findVersion(box.doc, s.version), s);
    uploads.setStreaming(hash, true);
    let blob: StoredBlob;
    const expect = provider.checksum && provider.checksum_type
      ? { algorithm: provider.checksum_type as DigestName, hex: provider.checksum }
      : undefined;
    // Held from just before the blob takes its name until its commit: then the session (direct) or the provider
    // (standard) references it durably, and orphan collection never sees it unreferenced in between.
    let held: string | undefined;
    try {
      // Only SHA-256 (content address, metadata checksum) and the provider's own type are needed now.
      blob = await req.reg.ctx.data.blobs.ingest(req.ctx.request.body, {
        maxBytes: max,
        digests: ["sha256"],
        hold: (sha256) => {
          held = sha256;
          req.reg.holdBlob(sha256);
        },
        ...(expect
          ? {
            expect,
            mismatchMessage: (actual: string) =>
              `Checksum mismatch: expected ${expect.algorithm} ${expect.hex}, got ${actual}`,
          }
          : {}),
      });
    } catch (err) {
      if (held) req.reg.releaseBlob(held);
      uploads.setStreaming(hash, false);
      throw err instanceof ApiError || err instanceof StoreError
        ? err
        : new ApiError(400, "The upload was interrupted");
    }
    // Once the commit naming the blob is durable, the store checks that no other node removed the blob meanwhile
    // (lib/store/s3/blobs.ts); also when the commit may have happened (an error that is not a refusal).
    let committed = false;
    let maybeCommitted = false;
    try {
      if (blob.size === 0) throw new ApiError(422, "The uploaded file is empty");
      if (s.mode === "direct") {
        await uploads.stage(hash, blob);
        committed = true;
        const view = ownerView(req);
        const current = currentBox(req.reg, s.box_id).doc;
        const version = findVersion(current, s.version);
        return json(renderProvider(view, current, version, sessionProvider(version, s)));
      }
      const result = await commitUpload(req, session, blob, s.actor);
      committed = true;
      return json(result);
    } catch (err) {
      maybeCommitted = !((asApiError(err)?.status ?? 500) < 500);
      throw err;
    } finally {
      uploads.setStreaming(hash, false);
      try {
        // A failed check never turns a durable commit into an error: the store checks once more later.
        await req.reg.ctx.data.blobs.confirm(blob.sha256, committed || maybeCommitted).catch((err) => {
          req.reg.ctx.logger.warn("registry: checking an upload's blob failed", { error: String(err) });
        });
      } finally {
        req.reg.releaseBlob(blob.sha256);
      }
    }
  };
}

export function uploadCallback(uploads: Uploads) {
  return async (req: Req): Promise<Response> => {
    const user = requireUser(req);
    const box = writableBox(req);
    const session = await uploads.lookup(req.ctx.params.id ?? "");
    const s = session.doc;
    const version = findVersion(box.doc, req.ctx.params.version ?? "");
    const provider = pathProvider(req, version);
    if (
      s.box_id !== box.id || s.version !== version.version || sessionProviderOrNone(version, s) !== provider
    ) {
      throw notFound();
    }
    if (s.mode !== "direct" || !s.staged) {
      throw new ApiError(422, "No file has been uploaded yet");
    }
    // A copy: the stored document is the store's own object.
    const staged = structuredClone(s.staged);
    const type = provider.checksum_type as DigestName | null;
    if (type && staged.digests[type] === undefined) {
      // A checksum type set after the PUT: hash the staged file once.
      staged.digests[type] = await hashBlob(req.reg, staged.sha256, type);
    }
    return json(await commitUpload(req, session, staged, user.username));
  };
}
