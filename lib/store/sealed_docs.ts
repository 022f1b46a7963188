// Short-lived documents of one collection keyed by an HMAC, their secrets sealed, expiring and swept: the storage
// of pending logins any node can finish, Boundary's OIDC attempts and Nomad's (docs/storage.md#oidc-login-attempts).

import type { DataDir } from "./data_dir.ts";
import type { DocWrite, StoredDoc } from "./documents.ts";

export interface SealedDocsOptions<T> {
  collection: string;
  /** The key purpose of the HMACs (ids and lookup hashes). */
  hmacPurpose: string;
  /** The key purpose of the sealed values. */
  sealPurpose: string;
  /** When a document expires (epoch ms). */
  expiresAt(doc: T): number;
  /** How often sweep() runs; none when left out (the owner sweeps, e.g. with more to delete). */
  sweepEveryMs?: number;
}

/** What a plan over one document decides: `doc` replaces it (null deletes); no `doc` commits nothing. */
export interface SealedDocPlan<T, R> {
  doc?: T | null;
  result: R;
}

/** Expired documents deleted per commit by the sweep. */
const sweepBatch = 500;

export class SealedDocs<T extends Record<string, unknown>> {
  readonly #data: DataDir;
  readonly #options: SealedDocsOptions<T>;
  readonly #timer: ReturnType<typeof setInterval> | undefined;
  #sweeping: Promise<number> | undefined;

  constructor(data: DataDir, options: SealedDocsOptions<T>) {
    this.#data = data;
    this.#options = options;
    if (options.sweepEveryMs !== undefined) {
      this.#timer = setInterval(() => this.sweep().catch(() => {}), options.sweepEveryMs);
    }
  }

  close(): void {
    clearInterval(this.#timer);
  }

  /** The HMAC of a secret (e.g. "nonce:…"): document ids and lookups, so the secret itself is never stored. */
  hmacOf(secret: string): string {
    return this.#data.keys.hmac(this.#options.hmacPurpose, secret);
  }

  /** The lock of document `id`. */
  lockOf(id: string): string {
    return `${this.#options.collection}/${id}`;
  }

  /** `plaintext` sealed with AES-256-GCM, bound to `aad` (the document id, and the field if it has several). */
  seal(plaintext: string, aad: string): string {
    return this.#data.keys.seal(this.#options.sealPurpose, plaintext, aad);
  }

  /** Reverses seal; undefined when it no longer opens (e.g. the root key changed since), never a throw. */
  open(sealed: string, aad: string): string | undefined {
    try {
      return this.#data.keys.open(this.#options.sealPurpose, sealed, aad);
    } catch {
      return undefined;
    }
  }

  /**
   * Runs `plan` on document `id` as the cluster has it now, under its lock, and commits what it decides
   * (durable before this resolves); two nodes planning on one document run one after the other.
   */
  async transact<R>(
    id: string,
    plan: (cur: StoredDoc<T> | undefined) => SealedDocPlan<T, R>,
  ): Promise<{ result: R }> {
    const { store } = this.#data;
    const collection = this.#options.collection;
    // A plan that writes nothing commits no batch (the store's transact).
    return await store.transact([this.lockOf(id)], () => {
      const cur = store.get<T>(collection, id);
      const decided = plan(cur);
      if (decided.doc === undefined) return { result: decided.result };
      return {
        writes: [{ collection, id, doc: decided.doc, ifVersion: cur?.version ?? 0 }],
        result: decided.result,
      };
    });
  }

  /** Deletes expired documents, a batch per commit; one run at a time. */
  sweep(): Promise<number> {
    this.#sweeping ??= this.#sweepAll().finally(() => (this.#sweeping = undefined));
    return this.#sweeping;
  }

  async #sweepAll(): Promise<number> {
    const { store } = this.#data;
    const { collection, expiresAt } = this.#options;
    let removed = 0;
    for (;;) {
      const now = Date.now();
      const dead: string[] = [];
      for (const d of store.list<T>(collection)) {
        if (expiresAt(d.doc) <= now) dead.push(d.id);
        if (dead.length >= sweepBatch) break;
      }
      if (!dead.length) return removed;
      const { result } = await store.transact(dead.map((id) => this.lockOf(id)), () => {
        const writes: DocWrite[] = [];
        for (const id of dead) {
          const cur = store.get<T>(collection, id);
          if (cur && expiresAt(cur.doc) <= now) {
            writes.push({ collection, id, doc: null, ifVersion: cur.version });
          }
        }
        return { writes, result: writes.length };
      });
      removed += result;
      if (result === 0 || dead.length < sweepBatch) return removed;
    }
  }
}
