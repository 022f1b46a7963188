// What a handler receives (RequestContext): built once per request, its costly parts computed on first use.

import type { Family, RequestContext } from "../http.ts";
import { parseRequestUrl } from "../http.ts";
import { requestIdOf } from "../request_id.ts";

/** The peer address of a request: given, computed on demand, or read from Deno.serve's handler info. */
export type RemoteAddress = string | (() => string) | { readonly remoteAddr: Deno.Addr };

/** What every context of one router shares (one object, so a context costs no more fields than before). */
export interface ContextSettings {
  trustProxy: boolean;
  /** Which family owns a path (lib/router/families.ts). */
  ownerOf(path: string): Family;
}

/**
 * A class rather than an object literal: the lazy url/clientIp getters live on the prototype instead of being
 * two new closures per request.
 */
export class Context implements RequestContext {
  #sequence: number;
  #requestId: string | undefined;
  #path: string;
  #family: Family | undefined;
  #url: URL | undefined;
  #ip: string | undefined;
  #remoteAddr: RemoteAddress;
  #settings: ContextSettings;
  retry = false;

  constructor(
    public request: Request,
    url: URL | undefined,
    public params: Record<string, string>,
    sequence: number,
    path: string,
    public maxBodyBytes: number,
    remoteAddr: RemoteAddress,
    settings: ContextSettings,
  ) {
    this.#sequence = sequence;
    this.#path = path;
    this.#url = url;
    this.#remoteAddr = remoteAddr;
    this.#settings = settings;
  }

  /** A fresh context for the same request, marked as answered a second time (lib/router/steps/cluster.ts). */
  again(): Context {
    const ctx = new Context(
      this.request,
      this.#url,
      this.params,
      this.#sequence,
      this.#path,
      this.maxBodyBytes,
      this.#remoteAddr,
      this.#settings,
    );
    ctx.retry = true;
    return ctx;
  }

  /** Built on first use: most requests never show their id. */
  get requestId(): string {
    return this.#requestId ??= requestIdOf(this.#sequence);
  }

  /** Which family owns the path: computed on first use (few handlers ask). */
  get family(): Family {
    return this.#family ??= this.#settings.ownerOf(this.#path);
  }

  get url(): URL {
    return this.#url ??= parseRequestUrl(this.request.url);
  }

  /** Computed on first use: reading the peer address costs a call into the runtime. */
  get clientIp(): string {
    if (this.#ip === undefined) {
      const from = this.#remoteAddr;
      const remote = typeof from === "string"
        ? from
        : typeof from === "function"
        ? from()
        : (from.remoteAddr as Deno.NetAddr).hostname ?? "";
      this.#ip = clientIp(this.request, remote, this.#settings.trustProxy);
    }
    return this.#ip;
  }
}

function clientIp(request: Request, remote: string, trustProxy: boolean): string {
  if (trustProxy) {
    const hop = request.headers.get("X-Forwarded-For")?.split(",")[0]?.trim();
    if (hop) return hop;
  }
  return remote;
}
