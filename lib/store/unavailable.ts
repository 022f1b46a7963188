// Whether a storage engine (PostgreSQL, the object store) could not be reached, as opposed to refusing a request;
// the store then fails with StorageUnavailableError (errors.ts; answered 503 with Retry-After: lib/store_http.ts).

const connectionCodes = new Set([
  "ECONNREFUSED",
  "ECONNRESET",
  "EPIPE",
  "ETIMEDOUT",
  "EHOSTUNREACH",
  "ENOTFOUND",
  "CONNECTION_CLOSED",
  "CONNECTION_ENDED",
  "CONNECTION_DESTROYED",
  "CONNECT_TIMEOUT",
]);

/** Whether `err` says PostgreSQL could not be reached or went away (not that a statement was wrong). */
export function isDatabaseUnreachable(err: unknown): boolean {
  if (!err || typeof err !== "object") return false;
  const e = err as { code?: unknown; errno?: unknown; name?: unknown };
  if (typeof e.code === "string") {
    // SQLSTATE class 08 (connection exception), 57P01-57P03 (shutdown, cannot connect now).
    if (connectionCodes.has(e.code) || /^08/.test(e.code) || /^57P0[123]$/.test(e.code)) return true;
  }
  if (typeof e.errno === "string" && connectionCodes.has(e.errno)) return true;
  return err instanceof Deno.errors.ConnectionRefused || err instanceof Deno.errors.ConnectionReset;
}

/** Whether an S3 SDK error is the store being unreachable or failing (network, 5xx), not a client mistake. */
export function isObjectStoreUnreachable(err: unknown): boolean {
  if (!err || typeof err !== "object") return false;
  const status = (err as { $metadata?: { httpStatusCode?: number } }).$metadata?.httpStatusCode;
  if (status !== undefined) return status >= 500;
  return isDatabaseUnreachable(err) || /ECONNREFUSED|socket hang up|connect/i.test(String(err));
}
