// A large streamed upload keeps the server's memory bounded: measured on a child process from
// /proc/<pid>/status. Size: WHARF_TEST_UPLOAD_MIB (default 256, CI-sized).

import { assert, assertEquals } from "../helpers/assert.ts";
import { spawnServer } from "../helpers/server.ts";
import { memoryKib, resetPeakMemory } from "../helpers/memory.ts";
import { Client } from "./helpers.ts";

const MIB = 1024 * 1024;
const uploadMib = Number(Deno.env.get("WHARF_TEST_UPLOAD_MIB") ?? "256");

Deno.test({
  name: `a ${uploadMib} MiB streamed upload keeps the server's resident memory bounded`,
  ignore: Deno.build.os !== "linux",
  fn: async () => {
    const dir = await Deno.makeTempDir({ prefix: "wharf-mem-" });
    const child = await spawnServer(dir, { WHARF_REGISTRY_ADMIN_PASSWORD: "admin-password-1" });
    try {
      const api = new Client(child.url);
      const token = await api.login("admin", "admin-password-1");
      await api.post("/api/v1/boxes", { name: "big" }, { token });
      await api.post("/api/v1/box/admin/big/versions", { version: "1.0.0" }, { token });
      await api.post("/api/v1/box/admin/big/version/1.0.0/providers", { name: "virtualbox" }, { token });
      const uploadPath = async () =>
        (await api.get("/api/v1/box/admin/big/version/1.0.0/provider/virtualbox/upload", { token })).body
          .upload_path as string;
      // One small upload first: the hash workers' isolates start once per server and are not what a large upload
      // costs. Start-up (argon2, module loading) peaks higher than the idle server: reset the high-water mark.
      const warmUp = await fetch(await uploadPath(), { method: "PUT", body: new Uint8Array(4 * MIB) });
      assertEquals(warmUp.status, 200, await warmUp.text());
      const upload_path = await uploadPath();
      await resetPeakMemory(child.process.pid);
      const before = await memoryKib(child.process.pid, "VmRSS");
      let sent = 0;
      const body = new ReadableStream<Uint8Array>({
        pull(c) {
          if (sent >= uploadMib * MIB) return c.close();
          const chunk = new Uint8Array(MIB);
          chunk.fill(sent / MIB & 0xff);
          c.enqueue(chunk);
          sent += MIB;
        },
      });
      const r = await fetch(upload_path, { method: "PUT", body });
      const answer = await r.json();
      assertEquals(r.status, 200, JSON.stringify(answer));
      assertEquals(answer.hosted, true);
      const peak = await memoryKib(child.process.pid, "VmHWM");
      const growthMib = (peak - before) / 1024;
      console.log(
        `upload ${uploadMib} MiB: RSS before ${Math.round(before / 1024)} MiB, peak ${
          Math.round(peak / 1024)
        } MiB`,
      );
      // Holding the body would grow RSS by the whole upload. Streaming grows it by 95–135 MiB on this VM (peak RSS
      // holds uncollected garbage and moves with load; measured 96–124 on 33e5924 and 106–133 now, both passes),
      // so the bound leaves room for that and still fails well before the whole body.
      assert(growthMib < Math.min(160, uploadMib * 0.625), `peak RSS grew by ${growthMib.toFixed(1)} MiB`);
    } finally {
      child.kill();
      await child.status;
      await Deno.remove(dir, { recursive: true });
    }
  },
});
