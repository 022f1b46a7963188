// Graceful shutdown and process-level behaviour of main.ts.

import { assert, assertEquals, assertMatch } from "../helpers/assert.ts";
import { spawnServer, withTimeout } from "../helpers/server.ts";

const mainPath = new URL("../../main.ts", import.meta.url).pathname;

Deno.test({
  name: "SIGTERM ends an open stream cleanly, finishes an in-flight request and exits 0",
  sanitizeResources: false,
  async fn() {
    const dataDir = await Deno.makeTempDir();
    try {
      const server = await spawnServer(dataDir, { WHARF_TEST_ROUTES: "1" });
      const stream = await fetch(`${server.url}/v1/_test/stream`);
      assertEquals(stream.status, 200);
      const reader = stream.body!.pipeThrough(new TextDecoderStream()).getReader();
      const first = await reader.read();
      assertEquals(first.value, "{}\n");
      const slow = fetch(`${server.url}/v1/_test/slow?ms=1000`);
      await new Promise((r) => setTimeout(r, 200));
      const started = Date.now();
      server.kill("SIGTERM");
      let rest = "";
      for (;;) {
        const { value, done } = await withTimeout(reader.read(), 10_000, "stream did not end");
        if (done) break;
        rest += value;
      }
      for (const line of rest.split("\n").filter(Boolean)) JSON.parse(line);
      assert(rest === "" || rest.endsWith("\n"), "the stream ends after a complete line");
      const slowRes = await slow;
      assertEquals(slowRes.status, 200);
      assertEquals(await slowRes.json(), { done: true });
      const status = await withTimeout(server.status, 10_000, "server did not exit");
      assertEquals(status.code, 0);
      assert(Date.now() - started < 8000, "exits within a few seconds");
    } finally {
      await Deno.remove(dataDir, { recursive: true });
    }
  },
});

async function runMain(args: string[], env: Record<string, string> = {}) {
  const out = await new Deno.Command(Deno.execPath(), {
    args: ["run", "-A", mainPath, ...args],
    env,
    stdout: "piped",
    stderr: "piped",
  }).output();
  return { code: out.code, stderr: new TextDecoder().decode(out.stderr) };
}

Deno.test("a bad flag or an unusable data dir is a one-line error and exit code 2", async () => {
  const badFlag = await runMain(["--bogus"]);
  assertEquals(badFlag.code, 2);
  assertEquals(badFlag.stderr.trim().split("\n").length, 1);
  assertMatch(badFlag.stderr, /^wharf: unknown argument "--bogus"/);
  const badPort = await runMain(["--port", "99999"]);
  assertEquals(badPort.code, 2);
  assertMatch(badPort.stderr, /invalid port/);
  const file = await Deno.makeTempFile();
  try {
    const badDir = await runMain(["--port", "0", "--data-dir", file]);
    assertEquals(badDir.code, 2);
    assertEquals(badDir.stderr.trim().split("\n").length, 1);
    assertMatch(badDir.stderr, /data dir .* is not usable/);
  } finally {
    await Deno.remove(file);
  }
  const badEnv = await runMain(["--port", "0"], { WHARF_LOG_LEVEL: "loud" });
  assertEquals(badEnv.code, 2);
  assertMatch(badEnv.stderr, /invalid log level/);
});

Deno.test({
  name: "a second server on the same data dir exits 2 instead of sharing it",
  sanitizeResources: false,
  async fn() {
    const dataDir = await Deno.makeTempDir();
    try {
      const first = await spawnServer(dataDir);
      const second = await runMain(["--port", "0", "--data-dir", dataDir]);
      assertEquals(second.code, 2);
      assertMatch(second.stderr, /in use by another wharf process/);
      first.kill("SIGTERM");
      assertEquals((await first.status).code, 0);
    } finally {
      await Deno.remove(dataDir, { recursive: true });
    }
  },
});
