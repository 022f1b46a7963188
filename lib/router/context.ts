// What a handler receives (RequestContext): built once per request, its costly parts computed on first use.

import type { RequestContext } from "../http.ts";
import { parseRequestUrl } from "../http.ts";
import { requestIdOf } from "../request_id.ts";

/** The peer address of a request: given, computed on demand, or read from Deno.serve's handler info. */
export type RemoteAddress = string | (() => string) | { readonly remoteAddr: Deno.Addr };

/** What every context of one router shares (one object, so a context costs no more fields than before). */
export interface ContextSettings {
  trustProxy: boolean;
}

/**
 * A class rather than an object literal: the lazy url/clientIp getters live on the prototype instead of being
 * two new closures per request.
 */
export class Context implements RequestContext {
  #sequence: number;
  #requestId: string | undefined;
  #url: URL | undefined;
  #ip: string | undefined;
  #remoteAddr: RemoteAddress;
  #settings: ContextSettings;
  retry = false;
  locals: unknown = undefined;

  constructor(
    public request: Request,
    url: URL | undefined,
    public params: Record<string, string>,
    sequence: number,
    public maxBodyBytes: number,
    remoteAddr: RemoteAddress,
    settings: ContextSettings,
  ) {
    this.#sequence = sequence;
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
