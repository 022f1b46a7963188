// Keeps a few idle LDAP connections per auth method so logins skip the TCP (and TLS / StartTLS) setup and
// teardown. Only connections are reused, never credentials: every login starts with a bind.

import type { Client } from "ldapts";
import { sha256Hex } from "../../lib/crypto.ts";
import { connectFirstReachable, type DerefAliases, type LdapTlsSettings } from "./ldap_connect.ts";

/** Where a login gets its connection from and gives it back to. */
export interface LdapConnectionSource {
  /** A connected client; `reused` when it served an earlier login. */
  open(): Promise<{ client: Client; reused: boolean }>;
  /** Hands the client back: kept for a later login when `reusable`, else closed. */
  done(client: Client, reusable: boolean): Promise<void>;
}

interface ConnectSettings extends LdapTlsSettings {
  urls: string[];
}

/** A new connection per login, closed after it (the behaviour without a pool). */
export function freshConnections(
  settings: ConnectSettings,
  timeoutMs: number,
  deref: DerefAliases,
): LdapConnectionSource {
  return {
    async open() {
      const { client } = await connectFirstReachable(settings.urls ?? [], settings, timeoutMs, deref);
      return { client, reused: false };
    },
    async done(client) {
      await client.unbind().catch(() => {});
    },
  };
}

interface Idle {
  client: Client;
  since: number;
}

interface MethodPool {
  /** Everything that shapes a connection; a login with other settings gets (and fills) a new pool. */
  configKey: string;
  idle: Idle[];
}

export interface LdapPoolOptions {
  /** Idle connections kept per method (connections in use are not limited). */
  maxIdlePerMethod: number;
  /** An idle connection unused this long is closed. */
  idleMs: number;
}

export class LdapConnectionPool {
  readonly options: LdapPoolOptions;
  #pools = new Map<string, MethodPool>();
  /** Bumped by invalidate: a login that began before its method changed or went away parks nothing. */
  #epochs = new Map<string, number>();
  #sweeper: ReturnType<typeof setInterval>;
  #closed = false;
  #keys = new WeakMap<ConnectSettings, { timeoutMs: number; deref: DerefAliases; key: string }>();

  constructor(options: LdapPoolOptions) {
    this.options = options;
    this.#sweeper = setInterval(() => this.#sweep(Date.now()), Math.max(1000, options.idleMs / 2));
    Deno.unrefTimer(this.#sweeper as unknown as number);
  }

  /**
   * The connection source for one login of `methodId` with these (decrypted) settings. The settings are
   * part of the key, so a PATCH of the method's URLs, TLS settings or client certificate retires the
   * connections made with the old ones.
   */
  source(
    methodId: string,
    settings: ConnectSettings,
    timeoutMs: number,
    deref: DerefAliases,
  ): LdapConnectionSource {
    const configKey = this.#configKey(settings, timeoutMs, deref);
    const fresh = freshConnections(settings, timeoutMs, deref);
    const epoch = this.#epochs.get(methodId) ?? 0;
    return {
      open: async () => {
        const pool = this.#pools.get(methodId);
        if (pool && pool.configKey !== configKey) this.invalidate(methodId);
        const idle = this.#pools.get(methodId)?.idle;
        while (idle?.length) {
          const { client } = idle.pop()!;
          // A connection the server closed is never re-dialled (ldap_connect.ts refuses), so it is dropped.
          if (client.isConnected) return { client, reused: true };
          await fresh.done(client, false);
        }
        return await fresh.open();
      },
      done: async (client, reusable) => {
        if ((this.#epochs.get(methodId) ?? 0) !== epoch) return await fresh.done(client, false);
        let pool = this.#pools.get(methodId);
        if (!pool && !this.#closed) this.#pools.set(methodId, pool = { configKey, idle: [] });
        if (
          reusable && client.isConnected && pool && pool.configKey === configKey &&
          pool.idle.length < this.options.maxIdlePerMethod
        ) {
          pool.idle.push({ client, since: Date.now() });
          return;
        }
        await fresh.done(client, false);
      },
    };
  }

  /**
   * The key of everything that shapes a connection. Remembered per settings object: callers that pass the
   * same (unchanging) object for every login of a method version skip the hashing.
   */
  #configKey(settings: ConnectSettings, timeoutMs: number, deref: DerefAliases): string {
    const known = this.#keys.get(settings);
    if (known && known.timeoutMs === timeoutMs && known.deref === deref) return known.key;
    const key = sha256Hex(JSON.stringify([
      settings.urls,
      settings.start_tls ?? false,
      settings.insecure_tls ?? false,
      settings.certificates ?? [],
      settings.client_certificate ?? "",
      settings.client_certificate_key ?? "",
      timeoutMs,
      deref,
    ]));
    this.#keys.set(settings, { timeoutMs, deref, key });
    return key;
  }

  /** Closes the idle connections of a method (changed or deleted). Connections in use close when done. */
  invalidate(methodId: string): void {
    this.#epochs.set(methodId, (this.#epochs.get(methodId) ?? 0) + 1);
    const pool = this.#pools.get(methodId);
    if (!pool) return;
    this.#pools.delete(methodId);
    for (const { client } of pool.idle) client.unbind().catch(() => {});
  }

  /** How many idle connections are kept for `methodId` (for tests). */
  idleCount(methodId: string): number {
    return this.#pools.get(methodId)?.idle.length ?? 0;
  }

  #sweep(now: number): void {
    for (const [id, pool] of this.#pools) {
      const keep = pool.idle.filter((i) => now - i.since < this.options.idleMs && i.client.isConnected);
      for (const i of pool.idle) if (!keep.includes(i)) i.client.unbind().catch(() => {});
      pool.idle = keep;
      if (keep.length === 0) this.#pools.delete(id);
    }
  }

  close(): void {
    this.#closed = true;
    clearInterval(this.#sweeper);
    for (const id of [...this.#pools.keys()]) this.invalidate(id);
  }
}
