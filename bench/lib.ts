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
}

/** Runs wrk with latency output and parses requests/s and latency percentiles. */
export async function runWrk(
  url: string,
  options: { connections?: number; seconds?: number; threads?: number } = {},
) {
  const out = await new Deno.Command("wrk", {
    args: [
      `-t${options.threads ?? 2}`,
      `-c${options.connections ?? 50}`,
      `-d${options.seconds ?? 5}s`,
      "--latency",
      url,
    ],
    stdout: "piped",
    stderr: "piped",
  }).output();
  const text = new TextDecoder().decode(out.stdout);
  const rps = Number(/Requests\/sec:\s+([\d.]+)/.exec(text)?.[1] ?? NaN);
  return {
    requestsPerSec: rps,
    p50ms: latency(text, "50%"),
    p99ms: latency(text, "99%"),
  } satisfies WrkResult;
}

function latency(text: string, label: string): number {
  const m = new RegExp(`${label.replace("%", "%")}\\s+([\\d.]+)(us|ms|s)`).exec(text);
  if (!m) return NaN;
  const v = Number(m[1]);
  return m[2] === "us" ? v / 1000 : m[2] === "s" ? v * 1000 : v;
}

/** Starts a Deno child running `script` with args; resolves once it prints a line matching `ready`. */
export async function startChild(
  script: string,
  args: string[],
  ready: RegExp,
  env: Record<string, string> = {},
) {
  const child = new Deno.Command(Deno.execPath(), {
    args: ["run", "-A", script, ...args],
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
