// Caps on concurrent event streams (WHARF_EVENTS_MAX_STREAMS, WHARF_EVENTS_MAX_STREAMS_PER_TOKEN): a slot is
// taken before the subscription exists and given back exactly once, whatever ends the stream.

import { ApiError } from "../../lib/errors.ts";

/** Which budget a stream counts against: its token, or for tokenless callers the client address. */
export function streamOwnerKey(accessorId: string, aclEnabled: boolean, clientIp: string): string {
  // Every tokenless caller shares the "anonymous" token (and with ACLs off everyone is anonymous): counted as
  // one owner, a single client could use up the whole anonymous budget, so each address gets its own.
  if (!aclEnabled || accessorId === "anonymous" || accessorId === "") return `ip:${clientIp}`;
  return `token:${accessorId}`;
}

export class StreamSlots {
  readonly #maxTotal: number;
  readonly #maxPerOwner: number;
  readonly #byOwner = new Map<string, number>();
  #total = 0;

  /** A limit of 0 means no cap. */
  constructor(maxTotal: number, maxPerOwner: number) {
    this.#maxTotal = maxTotal;
    this.#maxPerOwner = maxPerOwner;
  }

  get total(): number {
    return this.#total;
  }

  countFor(owner: string): number {
    return this.#byOwner.get(owner) ?? 0;
  }

  /** Takes a slot for `owner` and returns its release (idempotent), or throws the family's 429. */
  acquire(owner: string): () => void {
    const mine = this.#byOwner.get(owner) ?? 0;
    if (this.#maxPerOwner > 0 && mine >= this.#maxPerOwner) {
      const who = owner.startsWith("ip:") ? "client address" : "token";
      throw tooManyStreams(`Too many event streams for this ${who} (limit ${this.#maxPerOwner})`);
    }
    if (this.#maxTotal > 0 && this.#total >= this.#maxTotal) {
      throw tooManyStreams(`Too many event streams on this server (limit ${this.#maxTotal})`);
    }
    this.#byOwner.set(owner, mine + 1);
    this.#total++;
    let released = false;
    return () => {
      if (released) return;
      released = true;
      this.#total--;
      const left = (this.#byOwner.get(owner) ?? 1) - 1;
      if (left > 0) this.#byOwner.set(owner, left);
      else this.#byOwner.delete(owner);
    };
  }
}

function tooManyStreams(message: string): ApiError {
  return new ApiError(429, message, { headers: { "Retry-After": "1" } });
}
