// Helpers for the event-stream and ACL tests: a bootstrapped server, API calls, an NDJSON stream reader.

import type { EventInput } from "../../lib/store/mod.ts";
import { testWithSettings } from "../helpers/fixture.ts";
import {
  type ChildServer,
  spawnServer,
  startTestServer,
  type TestServer,
  withTimeout,
} from "../helpers/server.ts";
import { jsonOrUndefined } from "../helpers/values.ts";

export const rootSecret = "a3c2e9b4-5f6d-4e7a-8b9c-0d1e2f3a4b5c";

/** A server with ACLs on, bootstrapped from WHARF_ACL_BOOTSTRAP_SECRET and a 50 ms heartbeat. */
export function startEventsServer(env: Record<string, string> = {}, dataDir?: string): Promise<TestServer> {
  return startTestServer({
    WHARF_ACL_BOOTSTRAP_SECRET: rootSecret,
    WHARF_EVENTS_HEARTBEAT_MS: "50",
    ...env,
  }, dataDir);
}

/**
 * A bootstrapped server as a child process (its pid measurable) in a new temporary data folder named after
 * `prefix`; `stop` ends it and removes the folder.
 */
export async function spawnEventsServer(
  prefix: string,
  env: Record<string, string>,
): Promise<{ server: ChildServer; stop(): Promise<void> }> {
  const dir = await Deno.makeTempDir({ prefix });
  const server = await spawnServer(dir, { WHARF_ACL_BOOTSTRAP_SECRET: rootSecret, ...env });
  const stop = async () => {
    server.kill("SIGTERM");
    await server.status;
    await Deno.remove(dir, { recursive: true }).catch(() => {});
  };
  return { server, stop };
}

/** Registers a Deno.test run with a fresh startEventsServer(env) server, always stopped after. */
export const eventsServerTest = testWithSettings((env?: Record<string, string>) => startEventsServer(env));

export interface CallOptions {
  token?: string | undefined;
  body?: unknown;
  headers?: Record<string, string>;
}

export async function call(
  url: string,
  method: string,
  path: string,
  options: CallOptions = {},
): Promise<{ status: number; headers: Headers; text: string; json: unknown }> {
  const headers = new Headers(options.headers);
  if (options.token !== undefined) headers.set("X-Nomad-Token", options.token);
  const res = await fetch(`${url}${path}`, {
    method,
    headers,
    body: options.body === undefined
      ? undefined
      : typeof options.body === "string"
      ? options.body
      : JSON.stringify(options.body),
  });
  const text = await res.text();
  return { status: res.status, headers: res.headers, text, json: jsonOrUndefined(text) };
}

export async function putPolicy(url: string, name: string, rules: string): Promise<void> {
  const r = await call(url, "PUT", `/v1/acl/policy/${name}`, {
    token: rootSecret,
    body: { Name: name, Rules: rules },
  });
  if (r.status !== 200) throw new Error(`policy ${name}: ${r.status} ${r.text}`);
}

export async function createToken(
  url: string,
  policies: string[],
  extra: Record<string, unknown> = {},
): Promise<{ AccessorID: string; SecretID: string }> {
  const r = await call(url, "PUT", "/v1/acl/token", {
    token: rootSecret,
    body: { Name: "t", Type: "client", Policies: policies, ...extra },
  });
  if (r.status !== 200) throw new Error(`token: ${r.status} ${r.text}`);
  return r.json as { AccessorID: string; SecretID: string };
}

/** An event as /v1/event/publish takes it: the same shape producers give the store. */
export type PublishedEvent = EventInput;

export async function publish(url: string, events: PublishedEvent[], token = rootSecret): Promise<number> {
  const r = await call(url, "POST", "/v1/event/publish", { token, body: { Events: events } });
  if (r.status !== 200) throw new Error(`publish: ${r.status} ${r.text}`);
  return (r.json as { Index: number }).Index;
}

export const nodeEvent = (key: string, type = "NodeRegistration"): PublishedEvent => ({
  Topic: "Node",
  Type: type,
  Key: key,
  Payload: { Node: { ID: key } },
});

export const jobEvent = (key: string, namespace = "default"): PublishedEvent => ({
  Topic: "Job",
  Type: "JobRegistered",
  Key: key,
  Namespace: namespace,
  Payload: { Job: { ID: key, Namespace: namespace } },
});

export interface Frame {
  Index?: number;
  Events?: Array<Record<string, unknown> & { Topic: string; Type: string; Key: string; Index: number }>;
}

/** Reads an NDJSON body line by line; every line must be one JSON object ending in "\n". */
export class StreamReader {
  readonly response: Response;
  readonly lines: string[] = [];
  #readerHandle: ReadableStreamDefaultReader<Uint8Array> | undefined;
  #buffer = "";
  #decoder = new TextDecoder();
  #done = false;

  constructor(response: Response) {
    this.response = response;
  }

  get #reader(): ReadableStreamDefaultReader<Uint8Array> {
    this.#readerHandle ??= this.response.body!.getReader();
    return this.#readerHandle;
  }

  get done(): boolean {
    return this.#done;
  }

  /** The next frame (heartbeats included), or undefined at the end of the body. */
  async next(timeoutMs = 10_000): Promise<Frame | undefined> {
    while (true) {
      const nl = this.#buffer.indexOf("\n");
      if (nl >= 0) {
        const line = this.#buffer.slice(0, nl);
        this.#buffer = this.#buffer.slice(nl + 1);
        this.lines.push(line);
        const parsed = JSON.parse(line);
        if (typeof parsed !== "object" || parsed === null || Array.isArray(parsed)) {
          throw new Error(`line is not a JSON object: ${line}`);
        }
        return parsed as Frame;
      }
      if (this.#done) {
        if (this.#buffer !== "") throw new Error(`body ended inside a line: ${this.#buffer}`);
        return undefined;
      }
      const chunk = await withTimeout(this.#reader.read(), timeoutMs, "no stream data in time");
      if (chunk.done) this.#done = true;
      else this.#buffer += this.#decoder.decode(chunk.value, { stream: true });
    }
  }

  /** The next data frame, skipping heartbeats; undefined at the end. */
  async nextData(timeoutMs = 10_000): Promise<Frame | undefined> {
    const deadline = Date.now() + timeoutMs;
    while (true) {
      const f = await this.next(Math.max(1, deadline - Date.now()));
      if (f === undefined || f.Events !== undefined) return f;
    }
  }

  /** Reads until the body ends; returns the data frames seen meanwhile. */
  async readToEnd(timeoutMs = 10_000): Promise<Frame[]> {
    const frames: Frame[] = [];
    const deadline = Date.now() + timeoutMs;
    while (true) {
      const f = await this.next(Math.max(1, deadline - Date.now()));
      if (f === undefined) return frames;
      if (f.Events) frames.push(f);
    }
  }

  /** Collects data frames until none arrives for `quietMs` (heartbeats do not count as data). */
  async dataUntilQuiet(quietMs = 1000): Promise<Frame[]> {
    const frames: Frame[] = [];
    let last = Date.now();
    while (Date.now() - last < quietMs) {
      const f = await this.next(5_000);
      if (f === undefined) break;
      if (f.Events) {
        frames.push(f);
        last = Date.now();
      }
    }
    return frames;
  }

  async close(): Promise<void> {
    await this.#reader.cancel().catch(() => {});
  }
}

/** Opens a stream (token null = none); a non-200 answer is returned as a StreamReader whose response the test inspects. */
export async function openStream(
  url: string,
  query: string,
  token: string | null = rootSecret,
  headers: Record<string, string> = {},
): Promise<StreamReader> {
  const h = new Headers(headers);
  if (token !== null) h.set("X-Nomad-Token", token);
  const res = await fetch(`${url}/v1/event/stream${query ? `?${query}` : ""}`, { headers: h });
  return new StreamReader(res);
}

/** Opens a stream and waits for its first line (`{}`), so the start position is fixed. */
export async function subscribe(
  url: string,
  query: string,
  token: string | null = rootSecret,
): Promise<StreamReader> {
  const s = await openStream(url, query, token);
  if (s.response.status !== 200) {
    const text = await s.response.text();
    throw new Error(`stream: ${s.response.status} ${text}`);
  }
  const first = await s.next();
  if (first === undefined || Object.keys(first).length !== 0) throw new Error("first line is not {}");
  return s;
}

/** Runs `fn` with a subscription (as `subscribe` opens it) and closes it after, whether `fn` passed or threw. */
export async function withSubscription(
  url: string,
  query: string,
  fn: (stream: StreamReader) => Promise<void>,
): Promise<void> {
  const stream = await subscribe(url, query);
  try {
    await fn(stream);
  } finally {
    await stream.close();
  }
}

export async function denied(url: string, query: string, token: string | null): Promise<[number, string]> {
  const s = await openStream(url, query, token);
  if (s.response.status === 200) {
    await s.response.body?.cancel();
    return [200, ""];
  }
  return [s.response.status, await s.response.text()];
}
