// Graceful shutdown of an in-process server racing keep-alive clients that close their connections at any moment
// (Go's net/http, as Nomad's api client uses it): no close may end the process, and what is left after the grace
// period is closed (lib/serve.ts; docs/security.md, connections).

import { assert, assertEquals } from "../helpers/assert.ts";
import { startTestServer, withTimeout } from "../helpers/server.ts";

const encoder = new TextEncoder();
const decoder = new TextDecoder();

const graceMs = 300;
/** A request that ends well inside the grace period, and one that outlasts it. */
const quickMs = 120;
const pastGraceMs = 1200;

/** A keep-alive HTTP/1.1 client on one TCP connection, as Go's Transport keeps one per idle slot. */
class KeepAliveClient {
  #buffer = "";
  #closed = false;
  readonly ended: Promise<void>;
  #wake: (() => void) | undefined;

  constructor(readonly conn: Deno.TcpConn) {
    this.ended = (async () => {
      const chunk = new Uint8Array(16 * 1024);
      try {
        for (;;) {
          const n = await conn.read(chunk);
          if (n === null) break;
          this.#buffer += decoder.decode(chunk.subarray(0, n));
          this.#wake?.();
        }
      } catch {
        // reset by the server, or closed by this client
      }
      this.#closed = true;
      this.#wake?.();
    })();
  }

  /** Sends a GET; resolves with the status of its complete response, or undefined when the connection ends first. */
  async get(path: string): Promise<number | undefined> {
    await this.conn.write(encoder.encode(`GET ${path} HTTP/1.1\r\nHost: wharf\r\n\r\n`));
    for (;;) {
      const end = this.#buffer.indexOf("\r\n\r\n");
      if (end >= 0) {
        const head = this.#buffer.slice(0, end);
        const length = Number(/\r\ncontent-length: *(\d+)/i.exec(head)?.[1] ?? 0);
        if (this.#buffer.length >= end + 4 + length) {
          this.#buffer = this.#buffer.slice(end + 4 + length);
          return Number(head.split(" ")[1]);
        }
      }
      if (this.#closed) return undefined;
      await new Promise<void>((r) => (this.#wake = r));
    }
  }

  /** Closes from the client side, as Go does with an idle connection or a cancelled request. */
  close(): void {
    try {
      this.conn.close();
    } catch {
      // already closed
    }
  }
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

Deno.test("shutdown racing keep-alive clients that close their connections: the process lives on, nothing is left open", async () => {
  const rounds = 12;
  for (let round = 0; round < rounds; round++) {
    const server = await startTestServer({ WHARF_TEST_ROUTES: "1", WHARF_SHUTDOWN_GRACE: `${graceMs}ms` });
    const { hostname, port } = new URL(server.url);
    const clients = await Promise.all(
      Array.from(
        { length: 16 },
        async () => new KeepAliveClient(await Deno.connect({ hostname, port: Number(port) })),
      ),
    );
    try {
      // Every connection has served a request: the next wait on each is a kept-alive one.
      for (const status of await Promise.all(clients.map((c) => c.get("/v1/_test/slow?ms=0")))) {
        assertEquals(status, 200);
      }
      // Four connections carry a request that ends inside the grace period, four one that outlasts it; the
      // client closes the other eight and two of the long ones at moments spread over the shutdown, the grace
      // period's end included (a new spread each round).
      const quick = clients.slice(0, 4).map((c) => c.get(`/v1/_test/slow?ms=${quickMs}`));
      const long = clients.slice(4, 8).map((c) => c.get(`/v1/_test/slow?ms=${pastGraceMs}`));
      // Deno has them in hand (a request still unread when the graceful close starts is not answered: the
      // client retries it, as Go's does).
      await sleep(60);
      const closers = [...clients.slice(8), clients[4]!, clients[5]!].map((c, i) =>
        sleep(graceMs - 40 + ((round * 7 + i * 11) % 80)).then(() => c.close())
      );
      const stopping = performance.now();
      await withTimeout(server.stop(), graceMs + 10_000, "shutdown did not finish");
      await Promise.all(closers);
      for (const status of await Promise.all(quick)) assertEquals(status, 200);
      // The long requests the client kept open were cut at the grace period's end, not answered after it.
      const cut = await Promise.all(long.slice(2));
      assertEquals(cut, [undefined, undefined]);
      await withTimeout(Promise.all(clients.map((c) => c.ended)), 5000, "a connection was left open");
      assert(
        performance.now() - stopping < pastGraceMs,
        "the connections past the grace period were closed before their requests ended",
      );
      await Promise.all(long.slice(0, 2));
    } finally {
      for (const c of clients) c.close();
      await Promise.all(clients.map((c) => c.ended));
    }
  }
  // The cut handlers' timers end (they answer nobody), for the op sanitizer.
  await sleep(pastGraceMs);
});
