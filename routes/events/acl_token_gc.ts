// Expired ACL tokens' garbage collection (docs/events.md#token-expiry-and-garbage-collection): a periodic sweep.

import type { AppContext } from "../../lib/app.ts";
import type { DocWrite, EventInput } from "../../lib/store/mod.ts";
import { type StoredToken, tokenCollection } from "./acl_model.ts";
import type { AclState } from "./acl_state.ts";
import { oneTimeLock, oneTimeTokenRemoval } from "./acl_onetime.ts";
import { tokenEvent } from "./acl_tokens.ts";

/** Tokens examined between two yields of the event loop while a sweep looks for collectable ones. */
const scanSlice = 10_000;

export interface TokenGcSettings {
  /** How often a sweep runs (Nomad's ACLTokenExpirationGCInterval: 5 minutes). */
  intervalMs: number;
  /** An expired token is collected once it is at least this old (Nomad's acl_token_gc_threshold: 1 hour). */
  thresholdMs: number;
  /** Tokens deleted per sweep, in one commit; a longer backlog goes over the next sweeps. */
  batch: number;
}

/**
 * Nomad's rule: a token is collected when it has expired and was created at least the threshold ago (Nomad
 * compares the token's CreateIndex with the index of that moment; wharf keeps the CreateTime itself).
 */
export function collectable(token: StoredToken, now: number, thresholdMs: number): boolean {
  if (!token.ExpirationTime) return false;
  return Date.parse(token.ExpirationTime) <= now && Date.parse(token.CreateTime) <= now - thresholdMs;
}

/**
 * Runs the sweep every `intervalMs` until closed. On a cluster every node sweeps: a batch holds the locks a
 * manual delete takes (the token's and its one-time token's) and deletes only what is still there under them, so
 * of two nodes sweeping one token, the second finds it gone and emits no second ACLTokenDeleted event.
 */
export class TokenGc {
  readonly #ctx: AppContext;
  readonly #acl: AclState;
  readonly #settings: TokenGcSettings;
  readonly #timer: ReturnType<typeof setInterval>;
  #sweeping: Promise<number> | undefined;

  constructor(ctx: AppContext, acl: AclState, settings: TokenGcSettings) {
    this.#ctx = ctx;
    this.#acl = acl;
    this.#settings = settings;
    this.#timer = setInterval(() => {
      this.sweep().catch((err) => ctx.logger.warn("expired ACL token sweep failed", { error: String(err) }));
    }, settings.intervalMs);
    Deno.unrefTimer(this.#timer as unknown as number);
  }

  close(): void {
    clearInterval(this.#timer);
  }

  /** One batch of collectable tokens deleted in one commit; resolves to how many went. One run at a time. */
  sweep(now = Date.now()): Promise<number> {
    this.#sweeping ??= this.#sweepBatch(now).finally(() => (this.#sweeping = undefined));
    return this.#sweeping;
  }

  async #sweepBatch(now: number): Promise<number> {
    const { store } = this.#ctx.data;
    const { thresholdMs, batch } = this.#settings;
    const found: string[] = [];
    let scanned = 0;
    // Oldest first (insertion order). The scan yields every scanSlice tokens, so a million of them (~150 ms)
    // never hold up requests; a token changed meanwhile is checked again under the locks.
    for (const t of store.list<StoredToken>(tokenCollection)) {
      if (++scanned % scanSlice === 0) await new Promise((r) => setTimeout(r, 0));
      if (!collectable(t.doc, now, thresholdMs)) continue;
      found.push(t.id);
      if (found.length >= batch) break;
    }
    if (!found.length) return 0;
    const locks = found.flatMap((id) => [`${tokenCollection}/${id}`, oneTimeLock(id)]);
    const { result } = await store.transact(locks, () => {
      const writes: DocWrite[] = [];
      const events: EventInput[] = [];
      for (const id of found) {
        // Checked again under the locks: a delete (or another node's sweep) that got there first left nothing.
        const current = this.#acl.tokenByAccessor(id);
        if (!current || !collectable(current, now, thresholdMs)) continue;
        writes.push({ collection: tokenCollection, id, doc: null }, ...oneTimeTokenRemoval(this.#ctx, id));
        events.push(tokenEvent(this.#acl, "ACLTokenDeleted", current));
      }
      return { writes, events, result: events.length };
    });
    return result;
  }
}
