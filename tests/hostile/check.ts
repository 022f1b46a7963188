// Per-answer invariants for hostile traffic: never a 5xx, errors in the shape of the family that owns the
// (normalised) path, and no stack trace or source location in any answer.

import { assert, assertEquals } from "../helpers/assert.ts";
import { rawRequest, type RawResponse } from "../registry_fuzz/raw_http.ts";

export type Family = "auth" | "events" | "server" | "registry";

/** The owning family, computed from the path the server will see (dot segments resolved as URL parsing does). */
export function familyOf(target: string): Family {
  const path = new URL(target, "http://x").pathname.replace(/\/{2,}/g, "/");
  if (/^\/v1\/(auth-methods|scopes|accounts|managed-groups|users|auth-tokens)(\/|:|$)/.test(path)) {
    return "auth";
  }
  if (path.startsWith("/v1/") || path === "/v1") return "events";
  if (/^\/(health|authentication-complete|authentication-error)$/.test(path)) return "server";
  return "registry";
}

/** Text that only a leaked exception would put in an answer. */
const stackTrace = /\bat [\w.<>$]+ \(|file:\/\/\/|\.ts:\d+:\d+|ext:core|node:internal|TypeError:|RangeError:/;

export function describe(method: string, target: string, response: RawResponse): string {
  return `${method} ${target.slice(0, 200)} → ${response.status} ${response.text.slice(0, 300)}`;
}

/** Asserts the invariants every answer must meet; returns the parsed error body for auth/server errors. */
export function checkAnswer(method: string, target: string, response: RawResponse): void {
  const where = describe(method, target, response);
  assert(response.status >= 100 && response.status < 500, `server error or no status: ${where}`);
  assert(!stackTrace.test(response.text), `stack trace in the answer: ${where}`);
  if (response.status < 400 || method === "HEAD") return;
  // Deno's HTTP layer answers a request head over ~64 KiB itself: a bare 400 before any route runs.
  if (target.length > 60_000 && response.status === 400 && response.body.length === 0) return;
  const family = familyOf(target);
  const type = response.headers.get("content-type") ?? "";
  if (family === "events") {
    assert(type.startsWith("text/plain"), `events error must be text/plain: ${where}`);
    assert(response.text.length > 0, `events error text is empty: ${where}`);
    return;
  }
  assert(type.startsWith("application/json"), `error content type: ${where}`);
  let body: Record<string, unknown>;
  try {
    body = JSON.parse(response.text);
  } catch {
    throw new Error(`error body is not JSON: ${where}`);
  }
  if (family === "auth") {
    assert(typeof body.kind === "string" && body.kind !== "", `auth error needs kind: ${where}`);
    assert(typeof body.message === "string" && body.message !== "", `auth error needs message: ${where}`);
    const extra = Object.keys(body).filter((k) => !["kind", "message", "details"].includes(k));
    assertEquals(extra, [], `unexpected members in auth error: ${where}`);
  } else if (family === "server") {
    assert(typeof body.error === "string", `server error needs error: ${where}`);
  } else {
    assert(Array.isArray(body.errors) && body.success === false, `registry error shape: ${where}`);
  }
}

/** Default run count per property; WHARF_HOSTILE_RUNS scales it, WHARF_HOSTILE_SEED changes the seed. */
export const runs = Number(Deno.env.get("WHARF_HOSTILE_RUNS") ?? "150");
export const seed = Number(Deno.env.get("WHARF_HOSTILE_SEED") ?? "20261122");

const encoder = new TextEncoder();

/** Sends one request byte for byte, checks the invariants, and returns the answer. */
export async function send(
  baseUrl: string,
  method: string,
  target: string,
  headers: Record<string, string>,
  body?: Uint8Array | string,
): Promise<RawResponse> {
  const bytes = typeof body === "string" ? encoder.encode(body) : body;
  const response = await rawRequest(baseUrl, method, target, {
    headers: bytes ? { "Content-Type": "application/json", ...headers } : headers,
    body: bytes,
  });
  checkAnswer(method, target, response);
  return response;
}
