// HTTP to an OpenID provider, for every family that signs people in through one (docs/security.md#openid-providers):
// http(s) URLs only, redirects never followed, a per-request timeout covering the body, optional CA anchors.

/** Why a provider's answer could not be used; the families render the message in their own shape. */
export class OidcProviderError extends Error {}

/** A fetch bound to one provider's trust settings; close() releases its TLS client. */
export interface ProviderHttp {
  readonly timeoutMs: number;
  fetch(url: string, init?: RequestInit): Promise<Response>;
  close(): void;
}

export interface ProviderHttpOptions {
  /** PEM certificates added to the trust roots (none: the system/Mozilla roots alone). */
  caCerts?: readonly string[];
  /** How long one request, its body included, may take. */
  timeoutMs: number;
}

function failure(err: unknown, timeoutMs: number): string {
  if (err instanceof DOMException && err.name === "TimeoutError") return `timed out after ${timeoutMs} ms`;
  return err instanceof Error ? err.message : String(err);
}

export function createProviderHttp(options: ProviderHttpOptions): ProviderHttp {
  const { timeoutMs } = options;
  const client = options.caCerts?.length
    ? Deno.createHttpClient({ caCerts: [...options.caCerts] })
    : undefined;
  return {
    timeoutMs,
    async fetch(url, init = {}) {
      let parsed: URL;
      try {
        parsed = new URL(url);
      } catch {
        throw new OidcProviderError(`${JSON.stringify(url)} is not a URL`);
      }
      if (parsed.protocol !== "https:" && parsed.protocol !== "http:") {
        throw new OidcProviderError(`unsupported URL scheme in ${url}`);
      }
      const timeout = AbortSignal.timeout(timeoutMs);
      try {
        return await fetch(parsed, {
          ...init,
          redirect: "manual",
          signal: init.signal ? AbortSignal.any([init.signal, timeout]) : timeout,
          ...(client ? { client } : {}),
        } as RequestInit);
      } catch (err) {
        throw new OidcProviderError(`${init.method ?? "GET"} ${url} failed: ${failure(err, timeoutMs)}`);
      }
    },
    close() {
      client?.close();
    },
  };
}

/** The message of a failure while reading a provider's body (the request's timeout included). */
export function describeProviderFailure(err: unknown, timeoutMs: number): string {
  return failure(err, timeoutMs);
}
