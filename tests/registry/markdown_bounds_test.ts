// Descriptions a registry user writes are rendered to HTML on the event loop and cached: a description of 32,760
// `![` took ~0.2 s to render (markdown-it scans from every `[` to the paragraph's end) and the HTML cache, capped
// at 5,000 entries, not bytes, kept ~0.6 MB for each distinct description of `"` (docs/security.md#descriptions-and-profiles).

import { assert, assertEquals } from "../helpers/assert.ts";
import { spawnServer } from "../helpers/server.ts";
import { Client } from "./helpers.ts";

const PASSWORD = "admin-password-1";

/** The child's V8 heap in use, from its own metrics (WHARF_METRICS_PUBLIC=1). */
async function heapUsedBytes(url: string): Promise<number> {
  const text = await (await fetch(`${url}/v1/metrics?format=prometheus`)).text();
  const m = /^wharf_runtime_heap_used_bytes (\S+)$/m.exec(text);
  assert(m, "wharf_runtime_heap_used_bytes in the metrics");
  return Number(m[1]);
}

function median(values: number[]): number {
  return [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]!;
}

Deno.test("costly descriptions: bounded render time and a byte-bounded HTML cache", async (t) => {
  const dir = await Deno.makeTempDir({ prefix: "wharf-markdown-" });
  // A 192 MiB old generation: garbage is collected before the heap is read, and what the cache keeps stays.
  const child = await spawnServer(
    dir,
    { WHARF_REGISTRY_ADMIN_PASSWORD: PASSWORD, WHARF_METRICS_PUBLIC: "1" },
    [],
    undefined,
    ["--v8-flags=--max-old-space-size=192"],
  );
  try {
    const api = new Client(child.url);
    const token = await api.login("admin", PASSWORD);
    assertEquals((await api.post("/api/v1/boxes", { name: "slow" }, { token })).status, 200);
    assertEquals((await api.post("/api/v1/boxes", { name: "big" }, { token })).status, 200);

    await t.step("a description of 32,760 `![` answers in milliseconds, and /health meanwhile", async () => {
      const put = async (n: number) => {
        const started = performance.now();
        const r = await api.put("/api/v1/box/admin/slow", {
          box: { description: "![".repeat(32760) + `q${n}` },
        }, {
          token,
        });
        const took = performance.now() - started;
        assertEquals(r.status, 200, r.text.slice(0, 200));
        assert(r.body.description_html.startsWith("<p>![![!["), r.body.description_html.slice(0, 40));
        return took;
      };
      await put(0);
      // A long README of links is still Markdown: 1,000 list items.
      const readme = Array.from(
        { length: 1000 },
        (_, i) => `- [Project ${i}](https://example.com/p${i}) - a tool.`,
      );
      const links = await api.put("/api/v1/box/admin/slow", { box: { description: readme.join("\n") } }, {
        token,
      });
      assert(
        links.body.description_html.includes(
          '<li><a href="https://example.com/p999">Project 999</a> - a tool.</li>',
        ),
      );
      // Shown as plain text, still escaped (the console shows it as HTML).
      const script = await api.put("/api/v1/box/admin/slow", {
        box: { description: "![".repeat(32740) + "<script>alert(1)</script>&" },
      }, { token });
      assertEquals(script.status, 200, script.text.slice(0, 300));
      assert(script.body.description_html.endsWith("![![&lt;script&gt;alert(1)&lt;/script&gt;&amp;</p>\n"));
      const one: number[] = [];
      for (let n = 1; n <= 5; n++) one.push(await put(n));
      // The defect's shape: 20 such PUTs at once (4.5 s before) while /health is asked.
      const started = performance.now();
      const health = (async () => {
        await new Promise((resolve) => setTimeout(resolve, 5));
        const at = performance.now();
        await (await fetch(`${child.url}/health`)).body?.cancel();
        return performance.now() - at;
      })();
      await Promise.all(Array.from({ length: 20 }, (_, i) => put(100 + i)));
      const burst = performance.now() - started;
      const healthMs = await health;
      console.log(
        `one PUT: median ${median(one).toFixed(1)} ms (${one.map((x) => x.toFixed(0)).join(", ")}); ` +
          `20 at once: ${burst.toFixed(0)} ms; /health meanwhile: ${healthMs.toFixed(1)} ms`,
      );
      // Before: ~200–250 ms for one, 4.5 s for the 20 (a shared 2-core machine).
      assert(median(one) < 60, `one PUT took ${median(one).toFixed(1)} ms (median)`);
      assert(burst < 1500, `20 PUTs at once took ${burst.toFixed(0)} ms`);
    });

    await t.step('300 distinct 65,500-character descriptions of `"` keep the heap bounded', async () => {
      const before = await heapUsedBytes(child.url);
      const quotes = '"'.repeat(65490);
      for (let n = 0; n < 300; n++) {
        const r = await api.put("/api/v1/box/admin/big", { box: { description: `${quotes}${n}` } }, {
          token,
        });
        assertEquals(r.status, 200, r.text.slice(0, 200));
      }
      const growthMib = ((await heapUsedBytes(child.url)) - before) / (1024 * 1024);
      console.log(`heap in use grew by ${growthMib.toFixed(1)} MiB after 300 distinct descriptions`);
      // Before: every one's ~0.4 MB of HTML was kept (5,000 entries: +123–129 MiB); now at most 32 MiB for the
      // whole cache (+6–48 MiB measured, garbage included).
      assert(growthMib < 85, `the heap grew by ${growthMib.toFixed(1)} MiB`);
    });
  } finally {
    child.kill();
    await child.status;
    await Deno.remove(dir, { recursive: true }).catch(() => {});
  }
});
