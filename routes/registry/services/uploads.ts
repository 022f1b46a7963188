// Upload sessions (docs/registry.md#uploads-and-limits): prepared uploads as durable documents keyed by a
// hash of their secret id, the blobs they hold, their expiry; and preparing one for a caller (the API's GET
// …/upload and the web console's upload form).

import { ApiError } from "../../../lib/errors.ts";
import { randomSecret } from "../../../lib/ids.ts";
import type { DocWrite, StoredBlob, StoredDoc } from "../../../lib/store/mod.ts";
import { defaultProvider, providerIn } from "../core/architectures.ts";
import { notFound } from "../core/errors.ts";
import { registryLock } from "../core/locks.ts";
import { type BoxDoc, BOXES, type ProviderDoc, type VersionDoc } from "../core/model.ts";
import type { Actor, Registry } from "../core/registry.ts";
import { boxPath } from "../core/render.ts";
import { type ProviderPath, writableProvider } from "./providers.ts";

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

/** A standard upload is one PUT; a direct one is a PUT of the file and then a callback that commits it. */
export type Mode = "standard" | "direct";

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
export function sessionProviderOrNone(version: VersionDoc, s: UploadDoc): ProviderDoc | undefined {
  return s.architecture === undefined
    ? defaultProvider(version, s.provider)
    : providerIn(version, s.provider, s.architecture);
}

export function sessionProvider(version: VersionDoc, s: UploadDoc): ProviderDoc {
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

/** Where the prepared upload's file goes (and, for a direct upload, the callback that commits it). */
export interface PreparedUpload {
  upload_path: string;
  callback?: string;
}

/** Prepares an upload of the provider's file for the caller (a writer of the box; not to a revoked version). */
export async function prepareUpload(
  who: Actor,
  uploads: Uploads,
  at: ProviderPath,
  mode: Mode,
): Promise<PreparedUpload> {
  const { user, box, version, provider } = writableProvider(who, at);
  if (version.status === "revoked") throw new ApiError(422, `Version ${version.version} is revoked`);
  const tag = boxPath(who.reg, box.doc);
  const id = await uploads.create({
    box_id: box.id,
    tag,
    version: version.version,
    provider: provider.name,
    architecture: provider.architecture,
    mode,
    actor: user.username,
  });
  const api = `${who.origin}/api/v${who.api}`;
  const uploadPath = `${api}/uploads/${id}`;
  if (mode === "standard") return { upload_path: uploadPath };
  const providerPath = who.api === 2 ? `${provider.name}/${provider.architecture}` : provider.name;
  const callback =
    `${api}/box/${tag}/version/${version.version}/provider/${providerPath}/upload/direct/${id}`;
  return { upload_path: uploadPath, callback };
}
