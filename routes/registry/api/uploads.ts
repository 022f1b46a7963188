// Uploads (§8): prepare standard and direct uploads, the unauthenticated PUT of the bytes (streamed to
// the blob store), and the direct-upload callback. Upload sessions are durable documents keyed by a hash.

import { ApiError } from "../../../lib/errors.ts";
import { json } from "../../../lib/http.ts";
import { randomSecret } from "../../../lib/ids.ts";
import type { DigestName, DocWrite, StoredBlob, StoredDoc } from "../../../lib/store/mod.ts";
import { type Req } from "./auth.ts";
import { requireSolvent, requireUser } from "../core/caller.ts";
import { notFound } from "../core/errors.ts";
import { providerEvent } from "../core/events.ts";
import {
  type BoxDoc,
  BOXES,
  type HostedFile,
  now,
  type ProviderDoc,
  type VersionDoc,
} from "../core/model.ts";
import { boxPath, renderProvider } from "../core/render.ts";
import { ownerView, writableBox } from "./boxes.ts";
import { currentBox } from "../services/boxes.ts";
import { findVersion } from "../services/versions.ts";
import { pathProvider } from "./providers.ts";
import { hashBlob } from "../services/providers.ts";
import { defaultProvider, providerIn } from "../core/architectures.ts";
import type { Registry } from "../core/registry.ts";
import { registryLock } from "../core/locks.ts";

/*
 * Design. Each prepared upload is one document in `registry/uploads`, committed before the prepare answers,
 * so a restart between prepare and PUT (or between a direct PUT and its callback) loses nothing. The upload
 * id in the URL is a secret: the document id is HMAC(id) and the id itself is never stored or logged.
 * Session commits carry no events. A direct upload's staged blob is recorded in its document; the blob is
 * held (spared by orphan collection) exactly while a stored session names it, mirrored from the store.
 * Consuming an upload deletes its session in the same commit that points the provider at the blob, so a
 * crash leaves either the session (retry the PUT or callback) or the provider (done), never neither.
 * Expired sessions are deleted at start, periodically, and when looked up. Only "a PUT is streaming" lives
 * in memory: a restart ends any PUT anyway.
 */
export const UPLOADS = "registry/uploads";
const hmacPurpose = "registry.upload-url";

type Mode = "standard" | "direct";

export interface UploadDoc {
  [k: string]: unknown;
  box_id: string;
  tag: string;
  version: string;
  provider: string;
  /** The provider's architecture (absent in sessions prepared before architectures: the name's default). */
  architecture?: string;
  mode: Mode;
  /** Who prepared the upload: the actor of its event. */
  actor: string;
  /** Epoch ms until which the PUT may start (or, once staged, the callback may come). */
  expires_at: number;
  /** A direct upload's file once PUT, until its callback. */
  staged?: StoredBlob;
}

/** The provider a session uploads to, if it still exists under the same name and architecture. */
function sessionProviderOrNone(version: VersionDoc, s: UploadDoc): ProviderDoc | undefined {
  return s.architecture === undefined
    ? defaultProvider(version, s.provider)
    : providerIn(version, s.provider, s.architecture);
}

function sessionProvider(version: VersionDoc, s: UploadDoc): ProviderDoc {
  const p = sessionProviderOrNone(version, s);
  if (!p) throw notFound();
  return p;
}

export interface UploadSession {
  hash: string;
  doc: UploadDoc;
}

export class Uploads {
  /** Hashes of sessions whose PUT is streaming right now. */
  readonly #streaming = new Set<string>();
  readonly #reg: Registry;
  readonly #timer: ReturnType<typeof setInterval>;
  readonly #unwatch: () => void;
  #sweeping: Promise<void> | undefined;

  constructor(reg: Registry) {
    this.#reg = reg;
    const store = reg.ctx.data.store;
    // Hold staged blobs before the first orphan collection runs (the caller schedules it right after).
    for (const s of store.list<UploadDoc>(UPLOADS)) if (s.doc.staged) reg.holdBlob(s.doc.staged.sha256);
    this.#unwatch = store.watch(UPLOADS, (change) => {
      const before = (change.previous as StoredDoc<UploadDoc> | undefined)?.doc.staged?.sha256;
      const after = (change.current as StoredDoc<UploadDoc> | undefined)?.doc.staged?.sha256;
      if (after) reg.holdBlob(after);
      // Released after the whole commit is applied: a callback's commit adds the provider's reference to the
      // same blob in another watcher, and an orphan sweep must not start in between.
      if (before) queueMicrotask(() => reg.releaseBlob(before));
    });
    this.#timer = setInterval(() => this.sweep(), 15_000);
    Deno.unrefTimer(this.#timer);
    this.sweep();
  }

  /** Stops the sweeps and waits for one in flight: it writes to the store, which closes next. */
  async close(): Promise<void> {
    clearInterval(this.#timer);
    await this.#sweeping;
    this.#unwatch();
  }

  get size(): number {
    return this.#reg.ctx.data.store.count(UPLOADS);
  }

  /** Durably deletes expired sessions that are not streaming (their staged files are then released). */
  sweep(at = Date.now()): Promise<void> {
    this.#sweeping ??= this.#sweepExpired(at)
      .catch((err) => this.#reg.ctx.logger.warn("registry: upload sweep failed", { error: String(err) }))
      .finally(() => (this.#sweeping = undefined));
    return this.#sweeping;
  }

  async #sweepExpired(at: number): Promise<void> {
    const store = this.#reg.ctx.data.store;
    const expired = () =>
      [...store.list<UploadDoc>(UPLOADS)].filter((s) => !this.#streaming.has(s.id) && s.doc.expires_at <= at);
    if (expired().length === 0) return;
    // Global: it reads every session, whatever its namespace.
    await this.#reg.write(() => ({
      writes: expired().map((s): DocWrite => ({ collection: UPLOADS, id: s.id, doc: null })),
    }));
  }

  /** Deletes one session durably if it is still stored. */
  async #drop(hash: string): Promise<void> {
    await this.#reg.writeIn([registryLock.upload(hash)], () => ({
      writes: this.#reg.ctx.data.store.get(UPLOADS, hash)
        ? [{ collection: UPLOADS, id: hash, doc: null }]
        : [],
    }));
  }

  /** Stores a new session durably and returns its secret id. */
  async create(
    session: Pick<UploadDoc, "box_id" | "tag" | "version" | "provider" | "architecture" | "mode" | "actor">,
  ): Promise<string> {
    const id = randomSecret(32);
    const doc: UploadDoc = { ...session, expires_at: Date.now() + this.#reg.settings.uploadUrlTtlMs };
    const hash = this.#hash(id);
    await this.#reg.writeIn(
      [registryLock.upload(hash)],
      () => ({ writes: [{ collection: UPLOADS, id: hash, doc }] }),
    );
    return id;
  }

  #hash(id: string): string {
    return this.#reg.ctx.data.keys.hmac(hmacPurpose, id);
  }

  isStreaming(hash: string): boolean {
    return this.#streaming.has(hash);
  }

  setStreaming(hash: string, on: boolean): void {
    if (on) this.#streaming.add(hash);
    else this.#streaming.delete(hash);
  }

  /** The live session of `id` whose target still exists unchanged; 404 otherwise (dead ones are deleted). */
  async lookup(id: string): Promise<UploadSession> {
    const hash = this.#hash(id);
    const stored = this.#reg.ctx.data.store.get<UploadDoc>(UPLOADS, hash);
    if (!stored) throw notFound();
    const s = stored.doc;
    const streaming = this.#streaming.has(hash);
    if (!streaming && s.expires_at <= Date.now()) {
      await this.#drop(hash);
      throw notFound();
    }
    const box = this.#reg.store.get<BoxDoc>(BOXES, s.box_id)?.doc;
    const version = box?.versions.find((v) => v.version === s.version);
    const live = box && boxPath(this.#reg, box) === s.tag && version && version.status !== "revoked" &&
      sessionProviderOrNone(version, s) !== undefined;
    if (!live) {
      if (!streaming) await this.#drop(hash);
      throw notFound();
    }
    return { hash, doc: s };
  }

  /** Records a direct upload's file in its session durably and restarts its expiry. */
  async stage(hash: string, blob: StoredBlob): Promise<void> {
    await this.#reg.writeIn([registryLock.upload(hash)], () => {
      const current = this.#reg.ctx.data.store.get<UploadDoc>(UPLOADS, hash);
      if (!current) throw notFound();
      const doc: UploadDoc = {
        ...current.doc,
        staged: structuredClone(blob),
        expires_at: Date.now() + this.#reg.settings.uploadUrlTtlMs,
      };
      return { writes: [{ collection: UPLOADS, id: hash, doc }] };
    });
  }
}

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
    const user = requireUser(req);
    const box = writableBox(req);
    const version = findVersion(box.doc, req.ctx.params.version ?? "");
    const provider = pathProvider(req, version);
    if (version.status === "revoked") throw new ApiError(422, `Version ${version.version} is revoked`);
    const tag = boxPath(req.reg, box.doc);
    const id = await uploads.create({
      box_id: box.id,
      tag,
      version: version.version,
      provider: provider.name,
      architecture: provider.architecture,
      mode,
      actor: user.username,
    });
    const api = `${req.origin}/api/v${req.api}`;
    const uploadPath = `${api}/uploads/${id}`;
    if (mode === "standard") return json({ upload_path: uploadPath });
    const providerPath = req.api === 2 ? `${provider.name}/${provider.architecture}` : provider.name;
    const callback =
      `${api}/box/${tag}/version/${version.version}/provider/${providerPath}/upload/direct/${id}`;
    return json({ upload_path: uploadPath, callback });
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
      throw err instanceof ApiError ? err : new ApiError(400, "The upload was interrupted");
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
      maybeCommitted = !(err instanceof ApiError && err.status < 500);
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
