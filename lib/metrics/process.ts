// The standard process metrics (process_*: RSS, CPU, file descriptors, start time) and the runtime's heap and
// event-loop lag, read at scrape time from Deno and /proc (Linux; elsewhere those families stay empty).

import type { MetricsRegistry } from "./registry.ts";

/** Clock ticks per second of /proc/self/stat's CPU times (USER_HZ, 100 on every Linux Deno runs on). */
const ticksPerSecond = 100;
/** How often the event loop's lag is sampled. */
const lagProbeMs = 500;

export interface ProcessMetrics {
  /** Stops the event-loop probe. */
  stop(): void;
}

export function registerProcessMetrics(registry: MetricsRegistry): ProcessMetrics {
  let memory = Deno.memoryUsage();
  registry.onScrape(() => void (memory = Deno.memoryUsage()));
  registry.gaugeFrom("process_resident_memory_bytes", "Resident memory size in bytes.", () => memory.rss);
  registry.gaugeFrom("wharf_runtime_heap_used_bytes", "V8 heap in use, in bytes.", () => memory.heapUsed);
  registry.gaugeFrom("wharf_runtime_heap_total_bytes", "V8 heap reserved, in bytes.", () => memory.heapTotal);
  registry.gaugeFrom(
    "wharf_runtime_external_memory_bytes",
    "Memory held outside the V8 heap by JavaScript objects (buffers), in bytes.",
    () => memory.external,
  );
  const startSeconds = Math.round(performance.timeOrigin / 10) / 100;
  registry.gaugeFrom(
    "process_start_time_seconds",
    "Start time of the process since unix epoch in seconds.",
    () => startSeconds,
  );
  // From /proc/self (Linux): CPU, virtual memory, file descriptors.
  const virtual = registry.gaugeValue("process_virtual_memory_bytes", "Virtual memory size in bytes.");
  const cpu = registry.counterValue(
    "process_cpu_seconds_total",
    "User and system CPU time spent in seconds.",
  );
  const fds = registry.gauge("process_open_fds", "Number of open file descriptors.");
  const maxFds = registry.gauge("process_max_fds", "Maximum number of open file descriptors.");
  const lag = registry.histogram(
    "wharf_runtime_event_loop_lag_seconds",
    `How late a timer set every ${lagProbeMs} ms fired: time the event loop was busy with other work.`,
    [0.001, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5],
  ).labels();
  let maxSince = 0;
  registry.gaugeFrom(
    "wharf_runtime_event_loop_lag_max_seconds",
    "The largest event-loop lag seen since the previous scrape.",
    () => {
      const max = maxSince;
      maxSince = 0;
      return max;
    },
  );
  registry.onScrape(() => readProc());

  let limitRead = false;
  async function readProc(): Promise<void> {
    if (Deno.build.os !== "linux") return;
    const stat = await Deno.readTextFile("/proc/self/stat");
    // Fields after the command name (which may hold spaces), from field 3 (state) on.
    const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
    cpu.set((Number(fields[11]) + Number(fields[12])) / ticksPerSecond);
    virtual.set(Number(fields[20]));
    let open = 0;
    for await (const _ of Deno.readDir("/proc/self/fd")) open++;
    fds.labels().set(open);
    if (!limitRead) {
      // The file limit is the process's own and set at start: read once (even when it cannot be parsed).
      limitRead = true;
      const limits = /^Max open files\s+(\d+)/m.exec(await Deno.readTextFile("/proc/self/limits"));
      if (limits) maxFds.labels().set(Number(limits[1]));
    }
  }

  let expected = performance.now() + lagProbeMs;
  const timer = setInterval(() => {
    const now = performance.now();
    const late = Math.max(0, now - expected) / 1000;
    expected = now + lagProbeMs;
    lag.observe(late);
    if (late > maxSince) maxSince = late;
  }, lagProbeMs);
  Deno.unrefTimer(timer);
  return { stop: () => clearInterval(timer) };
}
