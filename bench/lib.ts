// Shared benchmark helpers: timing loops, percentiles, child processes, wrk runs, RSS readings.

export interface Figure {
  name: string;
  value: number;
  unit: string;
  baseline?: { name: string; value: number };
  target?: string;
}

export function ratio(f: Figure): string {
  return f.baseline ? (f.value / f.baseline.value).toFixed(2) + "×" : "";
}

export function formatFigures(title: string, figures: Figure[]): string {
  const rows = figures.map((f) =>
    `| ${f.name} | ${round(f.value)} ${f.unit} | ${
      f.baseline ? `${f.baseline.name}: ${round(f.baseline.value)} ${f.unit}` : "–"
    } | ${ratio(f) || "–"} | ${f.target ?? "–"} |`
  );
  return [
    `### ${title}`,
    "",
    "| Measure | wharf | Baseline (same run) | Ratio | Target |",
    "|---|---|---|---|---|",
    ...rows,
    "",
  ]
    .join("\n");
}

export function round(v: number): string {
  if (v >= 100) return Math.round(v).toLocaleString("en-US");
  return v.toFixed(2);
}

/** The median (the mean of the middle two for an even count). */
export function median(values: readonly number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = Math.floor(sorted.length / 2);
  return sorted.length % 2 ? sorted[mid]! : (sorted[mid - 1]! + sorted[mid]!) / 2;
}

export function percentile(sorted: number[], p: number): number {
  if (sorted.length === 0) return NaN;
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))]!;
}

export function rssMiB(pid: number): number {
  const status = Deno.readTextFileSync(`/proc/${pid}/status`);
  const m = /VmRSS:\s+(\d+) kB/.exec(status);
  return m ? Number(m[1]) / 1024 : NaN;
}

export function hasCommand(name: string): boolean {
  try {
    const out = new Deno.Command("sh", { args: ["-c", `command -v ${name}`], stdout: "null", stderr: "null" })
      .outputSync();
    return out.success;
  } catch {
    return false;
  }
}

export interface WrkResult {
  requestsPerSec: number;
  p50ms: number;
  p99ms: number;
  /** CPU seconds (user + system) wrk itself used; NaN unless measured (`cpus` given and /usr/bin/time present). */
  cpuSeconds?: number;
}

/**
 * Runs wrk with latency output and parses requests/s and latency percentiles. With `cpus` (a taskset CPU list)
 * wrk runs pinned to those CPUs and its own CPU time is measured, to show whether the client saturates.
 */
export async function runWrk(
  url: string,
  options: { connections?: number; seconds?: number; threads?: number; cpus?: string } = {},
) {
  const wrkArgs = [
    `-t${options.threads ?? 2}`,
    `-c${options.connections ?? 50}`,
    `-d${options.seconds ?? 5}s`,
    "--latency",
    url,
  ];
  const timed = options.cpus !== undefined && hasTime;
  const command = options.cpus === undefined ? "wrk" : "taskset";
  const args = options.cpus === undefined
    ? wrkArgs
    : ["-c", options.cpus, ...(timed ? ["/usr/bin/time", "-f", "wrk-cpu %U %S"] : []), "wrk", ...wrkArgs];
  const out = await new Deno.Command(command, { args, stdout: "piped", stderr: "piped" }).output();
  const text = new TextDecoder().decode(out.stdout);
  const cpu = /wrk-cpu ([\d.]+) ([\d.]+)/.exec(new TextDecoder().decode(out.stderr));
  const rps = Number(/Requests\/sec:\s+([\d.]+)/.exec(text)?.[1] ?? NaN);
  return {
    requestsPerSec: rps,
    p50ms: latency(text, "50%"),
    p99ms: latency(text, "99%"),
    cpuSeconds: cpu ? Number(cpu[1]) + Number(cpu[2]) : NaN,
  } satisfies WrkResult;
}

const hasTime = (() => {
  try {
    return Deno.statSync("/usr/bin/time").isFile;
  } catch {
    return false;
  }
})();

/** CPU seconds (user + system, all threads) a running process has used so far, from /proc. */
export function cpuSecondsOf(pid: number): number {
  const { user, system } = cpuTimesOf(pid);
  return user + system;
}

/** A process's CPU seconds so far, all threads: in its own code (user) and in the kernel on its behalf (system). */
export function cpuTimesOf(pid: number): { user: number; system: number } {
  const stat = Deno.readTextFileSync(`/proc/${pid}/stat`);
  // Fields after the parenthesised command name; utime and stime are fields 14 and 15 (clock ticks of 1/100 s).
  const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
  return { user: Number(fields[11]) / 100, system: Number(fields[12]) / 100 };
}

/** The CPUs this machine has (for pinning a server and its load generator apart). */
export function cpuCount(): number {
  return navigator.hardwareConcurrency ?? 1;
}

function latency(text: string, label: string): number {
  const m = new RegExp(`${label.replace("%", "%")}\\s+([\\d.]+)(us|ms|s)`).exec(text);
  if (!m) return NaN;
  const v = Number(m[1]);
  return m[2] === "us" ? v / 1000 : m[2] === "s" ? v * 1000 : v;
}

/**
 * Starts a Deno child running `script` with args; resolves once it prints a line matching `ready`. With `cpus`
 * (a taskset CPU list) the child runs pinned to those CPUs; `denoFlags` go before the script (e.g. `--inspect`).
 */
export async function startChild(
  script: string,
  args: string[],
  ready: RegExp,
  env: Record<string, string> = {},
  options: { cpus?: string; denoFlags?: string[] } = {},
) {
  const deno = ["run", "-A", ...options.denoFlags ?? [], script, ...args];
  // taskset execs the program: the child's pid stays the server's own (for cpuSecondsOf / rssMiB).
  const child = new Deno.Command(options.cpus === undefined ? Deno.execPath() : "taskset", {
    args: options.cpus === undefined ? deno : ["-c", options.cpus, Deno.execPath(), ...deno],
    stdout: "piped",
    stderr: "null",
    env,
  }).spawn();
  const reader = child.stdout.pipeThrough(new TextDecoderStream()).getReader();
  let seen = "";
  let match: RegExpExecArray | null = null;
  while (!(match = ready.exec(seen))) {
    const { value, done } = await reader.read();
    if (done) throw new Error(`${script} exited before it was ready: ${seen}`);
    seen += value;
  }
  // Keep draining stdout so the child never blocks on a full pipe.
  (async () => {
    while (!(await reader.read()).done) { /* drain */ }
  })().catch(() => {});
  return {
    child,
    match,
    stop: async () => {
      try {
        child.kill("SIGTERM");
      } catch { /* gone */ }
      await child.status;
    },
  };
}

/** Where a scenario runs its servers and its load generator: the last CPU and the others, when taskset exists. */
export interface Pinning {
  pin: boolean;
  serverCpus: string | undefined;
  clientCpus: string | undefined;
}

/**
 * Pins the process `pid` (every thread) to the last CPU and leaves the others for the load generator, with
 * taskset and ≥ 2 CPUs (BENCH_HTTP_PIN=0: unpinned), so a server is measured on one whole core.
 */
export async function pinServer(pid: number): Promise<Pinning> {
  const pin = Deno.env.get("BENCH_HTTP_PIN") !== "0" && hasCommand("taskset") && cpuCount() >= 2;
  if (!pin) return { pin, serverCpus: undefined, clientCpus: undefined };
  const serverCpus = String(cpuCount() - 1);
  const clientCpus = cpuCount() === 2 ? "0" : `0-${cpuCount() - 2}`;
  const pinned = await new Deno.Command("taskset", {
    args: ["-a", "-p", "-c", serverCpus, String(pid)],
    stdout: "null",
  }).output();
  if (!pinned.success) throw new Error("taskset could not pin the wharf server");
  return { pin, serverCpus, clientCpus };
}
