// Opens an LDAP connection for a login: tries each configured URL in order until one answers (TCP, the TLS
// handshake for ldaps://, StartTLS for ldap:// + start_tls), and hands the live socket to an ldapts Client.

import net from "node:net";
import tls from "node:tls";
import { Client, SearchRequest } from "ldapts";

export type DerefAliases = "never" | "find" | "search" | "always";

/**
 * ldapts 9.2.0's Client.search() drops its `derefAliases` option (every request says "never"), so each
 * search request this client sends is given the method's setting just before it is written.
 */
function applyDerefAliases(client: Client, deref: DerefAliases): void {
  const internals = client as unknown as { _sendSearch?: (...args: unknown[]) => Promise<unknown> };
  const send = internals._sendSearch;
  if (typeof send !== "function") throw new Error("ldapts internals changed: cannot set alias dereferencing");
  internals._sendSearch = function (this: unknown, request: unknown, ...rest: unknown[]) {
    if (request instanceof SearchRequest) request.derefAliases = deref;
    return send.call(this, request, ...rest);
  };
}

export interface LdapTlsSettings {
  start_tls?: boolean;
  insecure_tls?: boolean;
  certificates?: string[];
  client_certificate?: string;
  client_certificate_key?: string;
}

function tlsOptionsFor(host: string, settings: LdapTlsSettings): tls.ConnectionOptions {
  const options: tls.ConnectionOptions = {
    host,
    minVersion: "TLSv1.2",
    rejectUnauthorized: !settings.insecure_tls,
  };
  // SNI carries host names only; an IP literal is matched against the certificate's IP SANs instead.
  if (!net.isIP(host)) options.servername = host;
  // When set, the configured CAs are the only trust anchors (as in Boundary); else the system roots.
  if (settings.certificates?.length) options.ca = settings.certificates;
  if (settings.client_certificate && settings.client_certificate_key) {
    options.cert = settings.client_certificate;
    options.key = settings.client_certificate_key;
  }
  return options;
}

function describe(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}

/** Resolves once `socket` emits `readyEvent`; rejects on error or after timeoutMs (destroying it). */
function whenReady<T extends net.Socket>(socket: T, readyEvent: string, timeoutMs: number): Promise<T> {
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      cleanup();
      socket.destroy();
      reject(new Error(`connection timed out after ${timeoutMs} ms`));
    }, timeoutMs);
    const onReady = () => {
      cleanup();
      resolve(socket);
    };
    const onError = (err: Error) => {
      cleanup();
      socket.destroy();
      reject(err);
    };
    const cleanup = () => {
      clearTimeout(timer);
      socket.removeListener(readyEvent, onReady);
      socket.removeListener("error", onError);
    };
    socket.once(readyEvent, onReady);
    socket.once("error", onError);
  });
}

function parseLdapUrl(raw: string): { secure: boolean; host: string; port: number } {
  const url = new URL(raw);
  const secure = url.protocol === "ldaps:";
  if (!secure && url.protocol !== "ldap:") throw new Error(`unsupported URL scheme ${url.protocol}`);
  const host = url.hostname.replace(/^\[(.*)\]$/, "$1");
  if (!host) throw new Error("URL has no host");
  return { secure, host, port: url.port ? Number(url.port) : secure ? 636 : 389 };
}

async function connectOne(
  raw: string,
  settings: LdapTlsSettings,
  timeoutMs: number,
  deref: DerefAliases,
): Promise<Client> {
  const { secure, host, port } = parseLdapUrl(raw);
  const tlsOptions = tlsOptionsFor(host, settings);
  let socket: net.Socket | undefined = secure
    ? await whenReady(tls.connect({ ...tlsOptions, port }), "secureConnect", timeoutMs)
    : await whenReady(net.connect({ host, port, noDelay: true }), "connect", timeoutMs);
  // ldapts accepts an established socket from its factory. It would re-dial by itself after the server
  // closed the connection; that is refused: a re-dialled ldap:// + start_tls connection would send the
  // next bind's password before StartTLS. The caller opens a new connection instead.
  const takeSocket = () => {
    const s = socket;
    socket = undefined;
    if (!s) throw new Error("the LDAP connection was closed");
    return s;
  };
  const client = new Client({
    url: `${secure ? "ldaps" : "ldap"}://${host.includes(":") ? `[${host}]` : host}:${port}`,
    timeout: timeoutMs,
    connectTimeout: timeoutMs,
    strictDN: false,
    // ldapts treats any tlsOptions as "speak TLS from the first byte", so plain ldap:// gets none.
    ...(secure
      ? { tlsOptions, createSecureConnection: takeSocket as unknown as typeof tls.connect }
      : { createConnection: takeSocket as unknown as typeof net.connect }),
  });
  applyDerefAliases(client, deref);
  if (!secure && settings.start_tls) {
    try {
      await client.startTLS({ ...tlsOptions });
    } catch (err) {
      await client.unbind().catch(() => {});
      throw new Error(`StartTLS failed: ${describe(err)}`);
    }
  }
  return client;
}

/**
 * Connects to the first URL that answers, in order. A URL that refuses, times out or fails TLS is skipped;
 * when none answers the error lists every URL's reason.
 */
export async function connectFirstReachable(
  urls: readonly string[],
  settings: LdapTlsSettings,
  timeoutMs: number,
  deref: DerefAliases = "never",
): Promise<{ client: Client; url: string }> {
  const reasons: string[] = [];
  for (const url of urls) {
    try {
      return { client: await connectOne(url, settings, timeoutMs, deref), url };
    } catch (err) {
      reasons.push(`${url}: ${describe(err)}`);
    }
  }
  throw new Error(
    reasons.length ? `no LDAP server answered: ${reasons.join("; ")}` : "no LDAP URLs configured",
  );
}
