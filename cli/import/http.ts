// HTTP for the importer: JSON calls to a registry API with retries, source tokens (static or HCP client
// credentials, refreshed before they expire), and downloads that follow redirects without leaking the token.

import type { SourceAuth } from "./options.ts";

/** A registry answered with an error: its status and `errors` (never a URL with a secret in it). */
export class ApiFailure extends Error {
  readonly status: number;
  constructor(status: number, message: string) {
    super(message);
    this.status = status;
  }
}

export interface Credentials {
  /** The bearer token to send, or undefined (anonymous). */
  token(): Promise<string | undefined>;
  /** Called after a 401: true when a new token is worth a second try. */
  renew(): Promise<boolean>;
}

export function staticToken(token: string | undefined): Credentials {
  return { token: () => Promise.resolve(token), renew: () => Promise.resolve(false) };
}

/** The gem's HCP flow: client credentials POSTed to the token URL (HTTP Basic), a token kept until near expiry. */
export function sourceCredentials(auth: SourceAuth): Credentials {
  if (auth.kind === "none") return staticToken(undefined);
  if (auth.kind === "token") return staticToken(auth.token);
  let current: { token: string; until: number } | undefined;
  let pending: Promise<string> | undefined;
  const fetchToken = async (): Promise<string> => {
    const basic = btoa(`${encodeURIComponent(auth.clientId)}:${encodeURIComponent(auth.clientSecret)}`);
    const response = await fetch(auth.tokenUrl, {
      method: "POST",
      headers: {
        Authorization: `Basic ${basic}`,
        "Content-Type": "application/x-www-form-urlencoded",
        Accept: "application/json",
      },
      body: "grant_type=client_credentials",
    });
    const text = await response.text();
    let body: Record<string, unknown> = {};
    try {
      body = JSON.parse(text);
    } catch { /* reported below */ }
    if (!response.ok || typeof body.access_token !== "string") {
      const why = typeof body.error === "string" ? body.error : `HTTP ${response.status}`;
      throw new ApiFailure(
        response.status,
        `the source's token endpoint refused the client credentials (${why})`,
      );
    }
    const ttl = typeof body.expires_in === "number" ? body.expires_in : 3600;
    current = { token: body.access_token, until: Date.now() + Math.max(ttl - 60, ttl / 2) * 1000 };
    return body.access_token;
  };
  const fresh = () => (pending ??= fetchToken().finally(() => (pending = undefined)));
  return {
    token: async () => current && current.until > Date.now() ? current.token : await fresh(),
    renew: async () => {
      current = undefined;
      await fresh();
      return true;
    },
  };
}

const RETRIES = 4;

function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

function retryDelay(response: Response | undefined, attempt: number): number {
  const after = Number(response?.headers.get("retry-after"));
  if (Number.isFinite(after) && after > 0) return Math.min(after, 60) * 1000;
  return Math.min(500 * 2 ** attempt, 8000);
}

/** JSON calls to one registry's API (`base` is its origin, plus any path prefix). */
export class RegistryApi {
  readonly base: string;
  readonly label: string;
  readonly credentials: Credentials;

  constructor(base: string, label: string, credentials: Credentials) {
    this.base = base;
    this.label = label;
    this.credentials = credentials;
  }

  /** One call; GETs are retried on 429, 5xx and network errors. Errors: ApiFailure (404 too, unless `allow404`). */
  async call<T = Record<string, unknown>>(
    method: string,
    path: string,
    body?: unknown,
    options: { allow404?: boolean } = {},
  ): Promise<T | undefined> {
    let renewed = false;
    for (let attempt = 0;; attempt++) {
      const headers: Record<string, string> = { Accept: "application/json" };
      const token = await this.credentials.token();
      if (token) headers.Authorization = `Bearer ${token}`;
      if (body !== undefined) headers["Content-Type"] = "application/json";
      let response: Response | undefined;
      try {
        response = await fetch(this.base + path, {
          method,
          headers,
          redirect: "manual",
          ...(body !== undefined ? { body: JSON.stringify(body) } : {}),
        });
      } catch (err) {
        if (method === "GET" && attempt < RETRIES) {
          await sleep(retryDelay(undefined, attempt));
          continue;
        }
        throw new ApiFailure(
          0,
          `${this.label}: ${method} ${path}: ${err instanceof Error ? err.message : err}`,
        );
      }
      const text = await response.text();
      if (response.status === 401 && token && !renewed && await this.credentials.renew()) {
        renewed = true;
        continue;
      }
      // A 429 was not processed, whatever the method; other failures are retried only for reads.
      const retry = response.status === 429 || (response.status >= 500 && method === "GET");
      if (retry && attempt < RETRIES) {
        await sleep(retryDelay(response, attempt));
        continue;
      }
      if (response.status === 404 && options.allow404) return undefined;
      if (response.status >= 300) {
        throw new ApiFailure(response.status, this.#failure(method, path, response, text));
      }
      return (text ? JSON.parse(text) : {}) as T;
    }
  }

  #failure(method: string, path: string, response: Response, text: string): string {
    let errors = `HTTP ${response.status}`;
    try {
      const parsed = JSON.parse(text);
      if (Array.isArray(parsed.errors) && parsed.errors.length) errors = parsed.errors.join("; ");
    } catch { /* not the registry's error shape */ }
    if (response.status >= 300 && response.status < 400) {
      errors += ` (a redirect to ${
        hostOf(response.headers.get("location"))
      }: use that registry's URL instead)`;
    }
    return `${this.label}: ${method} ${path}: ${errors}`;
  }
}

/** Only scheme and host of a URL: query strings of storage redirects carry signatures. */
export function hostOf(url: string | null | undefined): string {
  try {
    return new URL(url ?? "").origin;
  } catch {
    return "(no URL)";
  }
}

/** HashiCorp's older names for vagrantcloud.com, which Vagrant treats as the same server. */
const VAGRANT_CLOUD_ALIASES = new Set(["vagrantcloud.com", "app.vagrantup.com", "atlas.hashicorp.com"]);

/** The source's token goes to the source's origin only (and, from vagrantcloud.com, to its aliases over https). */
export function mayCarryToken(url: string, tokenOrigin: string): boolean {
  const target = new URL(url);
  if (target.origin === tokenOrigin) return true;
  const source = new URL(tokenOrigin);
  return source.hostname === "vagrantcloud.com" && target.protocol === "https:" &&
    VAGRANT_CLOUD_ALIASES.has(target.hostname) && (target.port === "" || target.port === "443");
}

/**
 * GET (or HEAD) a file, following up to 10 redirects by hand: the source's token goes only to the source's own
 * origin, never to the storage host a download is redirected to (its URL is signed instead).
 */
export async function openFile(
  url: string,
  method: "GET" | "HEAD",
  tokenOrigin: string,
  credentials: Credentials,
  extraHeaders: Record<string, string> = {},
): Promise<Response> {
  let current = url;
  let renewed = false;
  for (let hop = 0; hop <= 10; hop++) {
    const headers: Record<string, string> = { ...extraHeaders };
    const token = mayCarryToken(current, tokenOrigin) ? await credentials.token() : undefined;
    if (token) headers.Authorization = `Bearer ${token}`;
    const response = await fetch(current, { method, headers, redirect: "manual" });
    if (response.status >= 300 && response.status < 400 && response.headers.has("location")) {
      await response.body?.cancel();
      current = new URL(response.headers.get("location")!, current).href;
      continue;
    }
    if (response.status === 401 && token && !renewed && await credentials.renew()) {
      await response.body?.cancel();
      renewed = true;
      hop--;
      continue;
    }
    if (!response.ok) {
      await response.body?.cancel();
      throw new ApiFailure(
        response.status,
        `download from ${hostOf(current)} answered HTTP ${response.status}`,
      );
    }
    return response;
  }
  throw new ApiFailure(0, `download of ${hostOf(url)} redirected more than 10 times`);
}
