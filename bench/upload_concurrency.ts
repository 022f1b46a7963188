// Many uploads at once: BENCH_UPLOAD_CONCURRENCY (16) curl -T uploads of a BENCH_UPLOAD_MIB (64) MiB box to
// one wharf child process, against the same number of concurrent `dd conv=fsync` copies of the file, in
// BENCH_UPLOAD_ROUNDS (3) interleaved rounds, each on a fresh server. Reports the server's peak RSS over its
// idle RSS (the bodies must be streamed and the hashing threads bounded) and the most Worker threads (the
// digest workers; Deno names them worker-N) alive at once.
// Run: flock -o -x /work/bench.lock deno run -A bench/upload_concurrency.ts

import { formatFigures } from "./lib.ts";
import { startBenchRegistry, timeShell } from "./registry_server.ts";

const concurrency = Number(Deno.env.get("BENCH_UPLOAD_CONCURRENCY") ?? 16);
const fileMiB = Number(Deno.env.get("BENCH_UPLOAD_MIB") ?? 64);
const roundCount = Number(Deno.env.get("BENCH_UPLOAD_ROUNDS") ?? 3);

function memoryMiB(pid: number, field: "VmRSS" | "VmHWM"): number {
  const m = new RegExp(`^${field}:\\s+(\\d+)`, "m").exec(Deno.readTextFileSync(`/proc/${pid}/status`));
  if (!m) throw new Error(`no ${field} in /proc/${pid}/status`);
  return Number(m[1]) / 1024;
}

/** Worker threads of the process now (a thread may end between listing and reading: skipped). */
function workerThreads(pid: number): number {
  let count = 0;
  for (const task of Deno.readDirSync(`/proc/${pid}/task`)) {
    try {
      if (Deno.readTextFileSync(`/proc/${pid}/task/${task.name}/comm`).startsWith("worker-")) count++;
    } catch {
      // gone
    }
  }
  return count;
}

const rounds: { dd: number; upload: number; peak: number; idle: number; growth: number; workers: number }[] =
  [];
for (let round = 0; round < roundCount; round++) {
  const registry = await startBenchRegistry({ WHARF_MAX_UPLOAD_BYTES: String(64 * 1024 ** 3) });
  try {
    const { api, token, server, dir } = registry;
    const pid = server.process.pid;
    const file = `${dir}/box.box`;
    await timeShell(`head -c ${fileMiB}M /dev/urandom > '${file}'`);
    const B = "/api/v1/box/alice/many";
    await api.expectOk("POST", "/api/v1/boxes", { token, body: { username: "alice", name: "many" } });
    const dd = await timeShell(
      Array.from(
        { length: concurrency },
        (_, i) => `dd if='${file}' of='${dir}/dd-${i}' bs=1M conv=fsync status=none &`,
      ).join(" ") + " wait",
    );
    for (let i = 0; i < concurrency; i++) await Deno.remove(`${dir}/dd-${i}`);
    // One provider per upload: each gets its own upload URL.
    const paths: string[] = [];
    for (let i = 0; i < concurrency; i++) {
      const version = `1.0.${i}`;
      await api.expectOk("POST", `${B}/versions`, { token, body: { version: { version } } });
      await api.expectOk("POST", `${B}/version/${version}/providers`, {
        token,
        body: { provider: { name: "virtualbox" } },
      });
      const prepared = await api.expectOk("GET", `${B}/version/${version}/provider/virtualbox/upload`, {
        token,
      });
      paths.push(String(prepared.upload_path));
    }
    // Start from the idle server: the high-water mark would otherwise include start-up.
    Deno.writeTextFileSync(`/proc/${pid}/clear_refs`, "5");
    const idle = memoryMiB(pid, "VmRSS");
    let workers = 0;
    const sampler = setInterval(() => (workers = Math.max(workers, workerThreads(pid))), 20);
    const upload = await timeShell(
      paths.map((p) => `curl -sS --fail -T '${file}' '${p}' -o /dev/null &`).join(" ") + " wait",
    ).finally(() => clearInterval(sampler));
    const peak = memoryMiB(pid, "VmHWM");
    rounds.push({ dd, upload, peak, idle, growth: peak - idle, workers });
  } finally {
    await registry.close();
  }
}
const totalMiB = concurrency * fileMiB;
const median = (key: keyof (typeof rounds)[number]) => {
  const sorted = rounds.map((r) => r[key]).sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)]!;
};
console.log(formatFigures(`${concurrency} concurrent uploads of a ${fileMiB} MiB box`, [
  {
    name: "aggregate upload (curl -T ×N, fsync'd), median",
    value: totalMiB / median("upload"),
    unit: "MiB/s",
    baseline: { name: "dd conv=fsync ×N", value: totalMiB / median("dd") },
  },
  { name: "server peak RSS during the uploads, median", value: median("peak"), unit: "MiB" },
  { name: "server peak RSS growth over idle, median", value: median("growth"), unit: "MiB" },
  {
    name: "Worker threads alive at once, most seen",
    value: Math.max(...rounds.map((r) => r.workers)),
    unit: "threads",
  },
]));
for (const [i, r] of rounds.entries()) {
  console.log(
    `- round ${i + 1}: upload ${(totalMiB / r.upload).toFixed(0)} vs dd ${
      (totalMiB / r.dd).toFixed(0)
    } MiB/s, ` +
      `RSS idle ${r.idle.toFixed(0)} → peak ${r.peak.toFixed(0)} MiB, worker threads ≤ ${r.workers}`,
  );
}
console.log(`- load average at the end: ${Deno.loadavg().map((l) => l.toFixed(1)).join(" ")}`);
