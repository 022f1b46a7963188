// A child server's resident memory, read from /proc/<pid>/status (Linux only).

import { assert } from "./assert.ts";

/** VmRSS (now) or VmHWM (peak since start or since resetPeakMemory) in KiB. */
export async function memoryKib(pid: number, field: "VmRSS" | "VmHWM"): Promise<number> {
  const status = await Deno.readTextFile(`/proc/${pid}/status`);
  const m = new RegExp(`^${field}:\\s+(\\d+) kB`, "m").exec(status);
  assert(m, `${field} in /proc/${pid}/status`);
  return Number(m[1]);
}

/** Resets the peak (VmHWM) to the current RSS: start-up peaks higher than an idle server. */
export async function resetPeakMemory(pid: number): Promise<void> {
  await Deno.writeTextFile(`/proc/${pid}/clear_refs`, "5");
}
