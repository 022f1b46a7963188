// An upload's file received and committed for a caller (docs/registry.md#uploads-and-limits): the
// unauthenticated PUT of the bytes to a prepared upload's URL (streamed to the blob store, checked against the
// provider's checksum) and a direct upload's callback, each committing the provider's new file with its
// ProviderUploaded event (a direct upload's PUT only stages it).

import { ApiError } from "../../../lib/errors.ts";
import { type DigestName, type StoredBlob, StoreError } from "../../../lib/store/mod.ts";
import { asApiError } from "../../../lib/store_http.ts";
import { requireSolvent } from "../core/caller.ts";
import { notFound } from "../core/errors.ts";
import { providerEvent } from "../core/events.ts";
import { registryLock } from "../core/locks.ts";
import { type BoxDoc, BOXES, type HostedFile, now } from "../core/model.ts";
import type { Actor } from "../core/registry.ts";
import { currentBox, ownerView } from "./boxes.ts";
import { hashBlob, type ProviderPath, type ProviderRecord, writableProvider } from "./providers.ts";
import {
  sessionProvider,
  sessionProviderOrNone,
  UPLOADS,
  type Uploads,
  type UploadSession,
} from "./uploads.ts";
import { findVersion } from "./versions.ts";

/**
 * A file as sent: its bytes (none for an empty request), taken once the upload is checked, and the
 * Content-Length declared, if any.
 */
export interface UploadedFile {
  body(): ReadableStream<Uint8Array> | null;
  declaredLength: string | null;
}

function hostedFile(blob: StoredBlob): HostedFile {
  return { sha256: blob.sha256, size: blob.size, digests: { ...blob.digests }, uploaded_at: now() };
}

/**
 * Points the session's provider at `blob` and deletes the session, in one commit with its ProviderUploaded
 * event: a crash leaves either the session (the client retries) or the uploaded provider.
 */
async function commitUpload(
  who: Actor,
  session: UploadSession,
  blob: StoredBlob,
  actor: string,
): Promise<ProviderRecord> {
  const reg = who.reg;
  const s = session.doc;
  // The session (consumed once) and the box's namespace (a box's owner never changes).
  const owner = reg.store.get<BoxDoc>(BOXES, s.box_id)?.doc.owner;
  if (owner === undefined) throw notFound();
  const keys = [registryLock.upload(session.hash), registryLock.namespace(owner)];
  return await reg.writeIn(keys, () => {
    if (!reg.store.get(UPLOADS, session.hash)) throw notFound();
    const box = currentBox(reg, s.box_id);
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
    const view = ownerView(who);
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
      result: { box: doc, version, provider },
    };
  });
}

/**
 * Receives the file of the prepared upload `id` (its secret id is the authority: no caller is needed but for
 * the namespace's solvency): a standard upload commits it, a direct one stages it for its callback.
 */
export async function receiveUpload(
  who: Actor,
  uploads: Uploads,
  id: string,
  file: UploadedFile,
): Promise<ProviderRecord> {
  const session = await uploads.lookup(id);
  const { hash, doc: s } = session;
  const box = currentBox(who.reg, s.box_id);
  requireSolvent(who, box.doc.owner);
  if (uploads.isStreaming(hash)) throw new ApiError(422, "Another upload to this URL is in progress");
  const declared = file.declaredLength;
  const max = who.reg.settings.maxUploadBytes;
  if (declared !== null && Number(declared) > max) {
    throw new ApiError(413, `Upload too large: the limit is ${max} bytes`);
  }
  const bytes = file.body();
  if (!bytes || declared === "0") throw new ApiError(422, "The uploaded file is empty");
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
    blob = await who.reg.ctx.data.blobs.ingest(bytes, {
      maxBytes: max,
      digests: ["sha256"],
      hold: (sha256) => {
        held = sha256;
        who.reg.holdBlob(sha256);
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
    if (held) who.reg.releaseBlob(held);
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
      who.reg.metrics.uploadStored(blob.size);
      const current = currentBox(who.reg, s.box_id).doc;
      const version = findVersion(current, s.version);
      return { box: current, version, provider: sessionProvider(version, s) };
    }
    const result = await commitUpload(who, session, blob, s.actor);
    committed = true;
    who.reg.metrics.uploadStored(blob.size);
    return result;
  } catch (err) {
    maybeCommitted = !((asApiError(err)?.status ?? 500) < 500);
    throw err;
  } finally {
    uploads.setStreaming(hash, false);
    try {
      // A failed check never turns a durable commit into an error: the store checks once more later.
      await who.reg.ctx.data.blobs.confirm(blob.sha256, committed || maybeCommitted).catch((err) => {
        who.reg.ctx.logger.warn("registry: checking an upload's blob failed", { error: String(err) });
      });
    } finally {
      who.reg.releaseBlob(blob.sha256);
    }
  }
}

/** Commits the file a direct upload staged (the caller a writer of the box the upload is for). */
export async function completeDirectUpload(
  who: Actor,
  uploads: Uploads,
  at: ProviderPath,
  id: string,
): Promise<ProviderRecord> {
  const { user, box, version, provider } = writableProvider(who, at);
  const session = await uploads.lookup(id);
  const s = session.doc;
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
    staged.digests[type] = await hashBlob(who.reg, staged.sha256, type);
  }
  return await commitUpload(who, session, staged, user.username);
}
