// Uploads (§8): prepare standard and direct uploads, the unauthenticated PUT of the bytes (streamed to
// the blob store), and the direct-upload callback. Upload ids live in memory, hashed, and expire.

import { ApiError } from "../../lib/errors.ts";
import { json } from "../../lib/http.ts";
import { randomSecret } from "../../lib/ids.ts";
import { sha256Hex } from "../../lib/crypto.ts";
import type { DigestName, StoredBlob } from "../../lib/store/mod.ts";
import { type Req, requireSolvent, requireUser } from "./auth.ts";
import { notFound } from "./errors.ts";
import { providerEvent } from "./events.ts";
import { type BoxDoc, BOXES, type HostedFile, now } from "./model.ts";
import { boxPath, renderProvider } from "./render.ts";
import { currentBox, ownerView, writableBox } from "./boxes.ts";
import { findVersion } from "./versions.ts";
import { findProvider, hashBlob } from "./providers.ts";
import type { Registry } from "./state.ts";

type Mode = "standard" | "direct";

interface UploadSession {
  boxId: string;
  tag: string;
  version: string;
  provider: string;
  mode: Mode;
  /** Who prepared the upload: the actor of its event. */
  actor: string;
  /** Until then the PUT may start (or, once staged, the callback may come). */
  expiresAt: number;
  streaming: boolean;
  staged: StoredBlob | undefined;
}

export class Uploads {
  readonly #sessions = new Map<string, UploadSession>();
  readonly #reg: Registry;
  readonly #timer: ReturnType<typeof setInterval>;

  constructor(reg: Registry) {
    this.#reg = reg;
    this.#timer = setInterval(() => this.sweep(), 15_000);
    Deno.unrefTimer(this.#timer);
  }

  close(): void {
    clearInterval(this.#timer);
  }

  get size(): number {
    return this.#sessions.size;
  }

  /** Drops expired sessions that are not streaming, and their staged files. */
  sweep(at = Date.now()): void {
    for (const [hash, s] of this.#sessions) {
      if (!s.streaming && s.expiresAt <= at) this.#drop(hash, s);
    }
  }

  #drop(hash: string, s: UploadSession): void {
    this.#sessions.delete(hash);
    if (s.staged) this.#reg.releaseBlob(s.staged.sha256);
  }

  create(session: Omit<UploadSession, "streaming" | "staged" | "expiresAt">): string {
    const id = randomSecret(32);
    this.#sessions.set(sha256Hex(id), {
      ...session,
      expiresAt: Date.now() + this.#reg.settings.uploadUrlTtlMs,
      streaming: false,
      staged: undefined,
    });
    return id;
  }

  /** The live session of `id` whose target still exists unchanged; 404 otherwise. */
  lookup(id: string): { hash: string; session: UploadSession } {
    const hash = sha256Hex(id);
    const s = this.#sessions.get(hash);
    if (!s) throw notFound();
    if (!s.streaming && s.expiresAt <= Date.now()) {
      this.#drop(hash, s);
      throw notFound();
    }
    const box = this.#reg.store.get<BoxDoc>(BOXES, s.boxId)?.doc;
    const version = box?.versions.find((v) => v.version === s.version);
    const live = box && boxPath(this.#reg, box) === s.tag && version && version.status !== "revoked" &&
      version.providers.some((p) => p.name === s.provider);
    if (!live) {
      if (!s.streaming) this.#drop(hash, s);
      throw notFound();
    }
    return { hash, session: s };
  }

  consume(hash: string): void {
    const s = this.#sessions.get(hash);
    if (s) this.#drop(hash, s);
  }
}

function hostedFile(blob: StoredBlob): HostedFile {
  return { sha256: blob.sha256, size: blob.size, digests: { ...blob.digests }, uploaded_at: now() };
}

/** Points the session's provider at `blob` in one commit with its ProviderUploaded event. */
async function commitUpload(req: Req, session: UploadSession, blob: StoredBlob, actor: string) {
  const reg = req.reg;
  return await reg.write(() => {
    const box = currentBox(req, session.boxId);
    const doc: BoxDoc = structuredClone(box.doc);
    const version = findVersion(doc, session.version);
    if (version.status === "revoked") throw new ApiError(422, `Version ${version.version} is revoked`);
    const provider = findProvider(version, session.provider);
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
      writes: [{ collection: BOXES, id: box.id, doc, ifVersion: box.version }],
      events: [providerEvent("ProviderUploaded", view, doc, version, provider, actor, {
        size: blob.size,
        sha256: blob.sha256,
        mode: session.mode,
      })],
      result: renderProvider(view, doc, version, provider),
    };
  });
}

export function prepareUpload(uploads: Uploads, mode: Mode) {
  return (req: Req): Response => {
    const user = requireUser(req);
    const box = writableBox(req);
    const version = findVersion(box.doc, req.ctx.params.version ?? "");
    const provider = findProvider(version, req.ctx.params.provider ?? "");
    if (version.status === "revoked") throw new ApiError(422, `Version ${version.version} is revoked`);
    const tag = boxPath(req.reg, box.doc);
    const id = uploads.create({
      boxId: box.id,
      tag,
      version: version.version,
      provider: provider.name,
      mode,
      actor: user.username,
    });
    const uploadPath = `${req.origin}/api/v1/uploads/${id}`;
    if (mode === "standard") return json({ upload_path: uploadPath });
    const callback =
      `${req.origin}/api/v1/box/${tag}/version/${version.version}/provider/${provider.name}/upload/direct/${id}`;
    return json({ upload_path: uploadPath, callback });
  };
}

export function receiveUpload(uploads: Uploads) {
  return async (req: Req): Promise<Response> => {
    const { hash, session } = uploads.lookup(req.ctx.params.id ?? "");
    const box = currentBox(req, session.boxId);
    requireSolvent(req, box.doc.owner);
    if (session.streaming) throw new ApiError(422, "Another upload to this URL is in progress");
    const declared = req.ctx.request.headers.get("Content-Length");
    const max = req.reg.settings.maxUploadBytes;
    if (declared !== null && Number(declared) > max) {
      throw new ApiError(413, `Upload too large: the limit is ${max} bytes`);
    }
    if (!req.ctx.request.body || declared === "0") throw new ApiError(422, "The uploaded file is empty");
    const provider = findProvider(findVersion(box.doc, session.version), session.provider);
    session.streaming = true;
    let blob: StoredBlob;
    const expect = provider.checksum && provider.checksum_type
      ? { algorithm: provider.checksum_type as DigestName, hex: provider.checksum }
      : undefined;
    const ingestDone = req.reg.ingestStarted();
    try {
      // Only SHA-256 (content address, metadata checksum) and the provider's own type are needed now.
      blob = await req.reg.ctx.data.blobs.ingest(req.ctx.request.body, {
        maxBytes: max,
        digests: ["sha256"],
        ...(expect
          ? {
            expect,
            mismatchMessage: (actual: string) =>
              `Checksum mismatch: expected ${expect.algorithm} ${expect.hex}, got ${actual}`,
          }
          : {}),
      });
    } catch (err) {
      ingestDone();
      session.streaming = false;
      throw err instanceof ApiError ? err : new ApiError(400, "The upload was interrupted");
    }
    req.reg.holdBlob(blob.sha256);
    ingestDone();
    try {
      if (blob.size === 0) throw new ApiError(422, "The uploaded file is empty");
      if (session.mode === "direct") {
        if (session.staged) req.reg.releaseBlob(session.staged.sha256);
        session.staged = blob;
        req.reg.holdBlob(blob.sha256);
        session.expiresAt = Date.now() + req.reg.settings.uploadUrlTtlMs;
        const view = ownerView(req);
        const current = currentBox(req, session.boxId).doc;
        const version = findVersion(current, session.version);
        return json(renderProvider(view, current, version, findProvider(version, session.provider)));
      }
      const result = await commitUpload(req, session, blob, session.actor);
      uploads.consume(hash);
      return json(result);
    } finally {
      session.streaming = false;
      req.reg.releaseBlob(blob.sha256);
    }
  };
}

export function uploadCallback(uploads: Uploads) {
  return async (req: Req): Promise<Response> => {
    const user = requireUser(req);
    const box = writableBox(req);
    const { hash, session } = uploads.lookup(req.ctx.params.id ?? "");
    const version = findVersion(box.doc, req.ctx.params.version ?? "");
    const provider = findProvider(version, req.ctx.params.provider ?? "");
    if (
      session.boxId !== box.id || session.version !== version.version || session.provider !== provider.name
    ) {
      throw notFound();
    }
    if (session.mode !== "direct" || !session.staged) {
      throw new ApiError(422, "No file has been uploaded yet");
    }
    const staged = session.staged;
    const type = provider.checksum_type as DigestName | null;
    if (type && staged.digests[type] === undefined) {
      // A checksum type set after the PUT: hash the staged file once.
      staged.digests[type] = await hashBlob(req, staged.sha256, type);
    }
    const result = await commitUpload(req, session, staged, user.username);
    uploads.consume(hash);
    return json(result);
  };
}
