// Request bodies cut short (docs/security.md#request-bodies): a body that ends before its declared length or
// before its last chunk, the client half-closing its socket, is the client's error — 400 in each family's own
// shape, never a 500, and no error-level log line (a stranger could fill the error log), also for many clients
// closing mid-body at once.

import { assert, assertEquals } from "../helpers/assert.ts";
import { parsePrometheus } from "../helpers/prometheus_text.ts";
import { startTestServer } from "../helpers/server.ts";
import { parseResponse, type RawResponse, readAll } from "../registry_fuzz/raw_http.ts";

const encoder = new TextEncoder();

type Cut = "short-content-length" | "unterminated-chunks" | "unparsable-chunk";

/** What each cut sends after the head: its framing header and its body bytes. */
const cuts: Record<Cut, { framing: string; body: string }> = {
  "short-content-length": { framing: "Content-Length: 100\r\n", body: '{"a":' },
  "unterminated-chunks": { framing: "Transfer-Encoding: chunked\r\n", body: '5\r\n{"a":\r\n' },
  // A chunk extension longer than Deno's HTTP layer takes: its read throws a plain Error ("invalid HTTP/1
  // request"), which was a 500 after the first fix of this file's defect.
  "unparsable-chunk": {
    framing: "Transfer-Encoding: chunked\r\n",
    body: `3;${"e".repeat(70_000)}\r\nabc\r\n0\r\n\r\n`,
  },
};

/** One route of each family that reads a body, with the Content-Type its body reader expects. */
const targets = [
  { family: "registry", method: "POST", path: "/api/v1/authenticate", type: "application/json" },
  { family: "oauth", method: "POST", path: "/oauth2/token", type: "application/x-www-form-urlencoded" },
  {
    family: "auth",
    method: "POST",
    path: "/v1/auth-methods/ampw_1234567890:authenticate",
    type: "application/json",
  },
  { family: "nomad", method: "PUT", path: "/v1/acl/login", type: "application/json" },
  { family: "console", method: "POST", path: "/ui/login", type: "application/x-www-form-urlencoded" },
] as const;

type Target = typeof targets[number];

/**
 * Sends `target`'s head and a body as `cut` says, then half-closes (`half`: the answer can still
 * be read) or closes the connection; the answer when one arrives.
 */
async function cutShort(
  baseUrl: string,
  target: Target,
  cut: Cut,
  half: boolean,
): Promise<RawResponse | null> {
  const url = new URL(baseUrl);
  const conn = await Deno.connect({ hostname: url.hostname, port: Number(url.port) });
  const { framing, body } = cuts[cut];
  const head = `${target.method} ${target.path} HTTP/1.1\r\nHost: ${url.host}\r\nAccept: text/html\r\n` +
    `Content-Type: ${target.type}\r\n${framing}\r\n`;
  try {
    await conn.write(encoder.encode(head + body));
    if (!half) return null;
    await conn.closeWrite();
    const raw = await readAll(conn);
    return raw.length === 0 ? null : parseResponse(raw, false);
  } finally {
    try {
      conn.close();
    } catch {
      // closed by the peer
    }
  }
}

/** The answer is a 400 in the shape of `target`'s family. */
function assertFamilyShape(target: Target, answer: RawResponse, label: string): void {
  assertEquals(answer.status, 400, `${label}: ${answer.text}`);
  const type = answer.headers.get("content-type") ?? "";
  if (target.family === "registry") {
    const body = JSON.parse(answer.text);
    assertEquals(body.success, false, label);
    assert(Array.isArray(body.errors) && /ended early/.test(body.errors[0]), `${label}: ${answer.text}`);
  } else if (target.family === "oauth") {
    const body = JSON.parse(answer.text);
    assertEquals(body.error, "invalid_request", `${label}: ${answer.text}`);
    assert(/ended early/.test(body.error_description), `${label}: ${answer.text}`);
  } else if (target.family === "auth") {
    const body = JSON.parse(answer.text);
    assertEquals(body.kind, "InvalidArgument", `${label}: ${answer.text}`);
    assert(/ended early/.test(body.message), `${label}: ${answer.text}`);
  } else if (target.family === "nomad") {
    assert(type.startsWith("text/plain"), `${label}: ${type}`);
    assert(/ended early/.test(answer.text), `${label}: ${answer.text}`);
  } else {
    assert(type.startsWith("text/html"), `${label}: ${type}`);
    assert(/ended early/.test(answer.text), `${label}: ${answer.text.slice(0, 300)}`);
  }
}

/** Statuses of the access lines for `path`, in order. */
function accessStatuses(logLines: string[], path: string): number[] {
  return logLines.map((l) => JSON.parse(l)).filter((r) => r.msg === "request" && r.path === path)
    .map((r) => r.status);
}

Deno.test("bodies cut short answer 400 in each family's shape and log no error", async () => {
  const logLines: string[] = [];
  const metricsToken = "metrics-token-0123456789abcdef";
  const server = await startTestServer({ WHARF_METRICS_TOKEN: metricsToken }, undefined, { logLines });
  try {
    for (const target of targets) {
      for (const cut of Object.keys(cuts) as Cut[]) {
        const label = `${target.method} ${target.path} (${cut})`;
        const answer = await cutShort(server.url, target, cut, true);
        assert(answer !== null, `${label}: no answer after the half-close`);
        assertFamilyShape(target, answer, label);
      }
    }

    // Many clients closing mid-body at once (the probe: 600 clients gave 98 error lines with stacks).
    const clients = 300;
    await Promise.all(
      Array.from({ length: clients }, (_, i) =>
        cutShort(
          server.url,
          targets[i % targets.length]!,
          i % 2 ? "unterminated-chunks" : "short-content-length",
          false,
        ).catch(() => null)),
    );
    // The server notices each close on its own time: wait (bounded) until every request has its access line.
    const expected = Object.keys(cuts).length * targets.length + clients;
    const answered = () => targets.flatMap((t) => accessStatuses(logLines, t.path)).length;
    for (let i = 0; i < 100 && answered() < expected; i++) await new Promise((r) => setTimeout(r, 50));
    assertEquals(answered(), expected, "requests with an access line");

    for (const target of targets) {
      const statuses = accessStatuses(logLines, target.path);
      assert(statuses.length > 0, `${target.path}: no access line`);
      assertEquals(statuses.filter((s) => s >= 500), [], `${target.path}: 5xx answers`);
      assertEquals(statuses.filter((s) => s !== 400), [], `${target.path}: answers other than 400`);
    }
    const errors = logLines.filter((l) => ["error", "warn"].includes(JSON.parse(l).level));
    assertEquals(errors, [], "warn/error log lines");

    // The metrics count them as client errors (the only requests so far besides this scrape).
    const scrape = await fetch(`${server.url}/v1/metrics?format=prometheus`, {
      headers: { Authorization: `Bearer ${metricsToken}` },
    });
    assertEquals(scrape.status, 200);
    const samples = parsePrometheus(await scrape.text()).get("wharf_http_requests_total")?.samples ?? [];
    const byClass = (c: string) =>
      samples.filter((x) => x.labels.status_class === c).reduce((sum, x) => sum + x.value, 0);
    assertEquals({ "4xx": byClass("4xx"), "5xx": byClass("5xx") }, { "4xx": expected, "5xx": 0 });
  } finally {
    await server.stop();
  }
});
