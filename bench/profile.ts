// A JS-level CPU profile of registry reads under wrk, for wharf and for the bare servers it is measured against:
// each server runs with --inspect, this script drives V8's sampling profiler over the inspector's WebSocket while
// wrk loads one path, and prints self and total time per function and self time per file, in µs per request.
// Deno 2.9.6 has no --cpu-prof; this is the way to see where a request's JS time goes.
// Usage: deno run -A bench/profile.ts [wharf] [bare] [floor] [promised] — wharf, bare and floor without arguments.
// Settings: BENCH_REGISTRY_BOXES (2,000), BENCH_PROFILE_SECONDS (10, per profile), BENCH_PROFILE_TOP (25 rows),
// BENCH_PROFILE_INTERVAL (50 µs between samples), BENCH_PROFILE_DIR (keeps the .cpuprofile files, for Chrome
// DevTools' Performance panel), BENCH_PROFILE_MAIN (another checkout's main.ts), BENCH_PROFILE_BEFORE (a second
// checkout's main.ts, e.g. from `git archive REV | tar -x -C DIR`, profiled in the same run as "before"). With
// taskset and ≥ 2 CPUs the servers run on the last CPU and wrk (one thread, 50 connections) on the others.
// Figures under the profiler are inflated (~4× on the 2-vCPU VM): compare shares and same-run profiles only.

import { ADMIN_PASSWORD, RegistryApi } from "../tests/registry_clients/registry_api.ts";
import { hasCommand, pinServer, runWrk, startChild } from "./lib.ts";
import { boxName, seedBoxes } from "./registry_seed.ts";
import { captureAnswers } from "./registry_answers.ts";

const boxCount = Number(Deno.env.get("BENCH_REGISTRY_BOXES") ?? 2_000);
const seconds = Number(Deno.env.get("BENCH_PROFILE_SECONDS") ?? 10);
const top = Number(Deno.env.get("BENCH_PROFILE_TOP") ?? 25);
const intervalMicros = Number(Deno.env.get("BENCH_PROFILE_INTERVAL") ?? 50);
const keepDir = Deno.env.get("BENCH_PROFILE_DIR");
const wharfMain = Deno.env.get("BENCH_PROFILE_MAIN") ?? new URL("../main.ts", import.meta.url).pathname;
const beforeMain = Deno.env.get("BENCH_PROFILE_BEFORE");
const which = Deno.args.length ? Deno.args : ["wharf", "bare", "floor"];

/** The parts of a V8 .cpuprofile this script reads. */
interface CpuProfile {
  nodes: {
    id: number;
    callFrame: {
      functionName: string;
      scriptId: string;
      url: string;
      lineNumber: number;
      columnNumber: number;
    };
    children?: number[];
  }[];
  startTime: number;
  endTime: number;
  samples: number[];
  timeDeltas: number[];
}

/** A minimal Chrome DevTools Protocol client on the inspector's WebSocket: calls, and the scripts it announces. */
class Inspector {
  #nextId = 1;
  #pending = new Map<number, (message: { result?: unknown; error?: unknown }) => void>();
  /** scriptId → the source map URL of each script Debugger.enable announced. */
  readonly sourceMaps = new Map<string, string>();
  private constructor(private socket: WebSocket) {
    socket.onmessage = (event) => {
      const message = JSON.parse(event.data);
      if (message.method === "Debugger.scriptParsed" && message.params.sourceMapURL) {
        this.sourceMaps.set(message.params.scriptId, message.params.sourceMapURL);
      }
      this.#pending.get(message.id)?.(message);
      this.#pending.delete(message.id);
    };
  }

  static async connect(inspectPort: number): Promise<Inspector> {
    const targets = await (await fetch(`http://127.0.0.1:${inspectPort}/json/list`)).json();
    const socket = new WebSocket(targets[0].webSocketDebuggerUrl);
    await new Promise((resolve, reject) => {
      socket.onopen = resolve;
      socket.onerror = reject;
    });
    return new Inspector(socket);
  }

  call(method: string, params: Record<string, unknown> = {}): Promise<unknown> {
    const id = this.#nextId++;
    this.socket.send(JSON.stringify({ id, method, params }));
    return new Promise((resolve, reject) => {
      this.#pending.set(id, (m) => m.error ? reject(new Error(JSON.stringify(m.error))) : resolve(m.result));
    });
  }

  close(): void {
    this.socket.close();
  }
}

const base64Digits = new Map(
  [..."ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/"].map((c, i) => [c, i]),
);

/**
 * Per emitted line, the [column, source line] of each mapping of an inline source map (the "mappings" field's
 * base64 VLQ: fields relative to the previous segment, the column to the previous one on the same line).
 */
function decodeMappings(mappings: string): [number, number][][] {
  const lines: [number, number][][] = [];
  let sourceLine = 0;
  for (const text of mappings.split(";")) {
    const segments: [number, number][] = [];
    let column = 0;
    for (const segment of text.split(",")) {
      if (!segment) continue;
      const fields: number[] = [];
      for (let i = 0, value = 0, shift = 0; i < segment.length; i++) {
        const digit = base64Digits.get(segment[i]!)!;
        value += (digit & 31) << shift;
        if (digit & 32) {
          shift += 5;
        } else {
          fields.push(value & 1 ? -(value >>> 1) : value >>> 1);
          value = 0;
          shift = 0;
        }
      }
      column += fields[0]!;
      if (fields.length < 4) continue;
      sourceLine += fields[2]!;
      segments.push([column, sourceLine]);
    }
    lines.push(segments);
  }
  return lines;
}

/** The TypeScript line (1-based) of a position in emitted JS, from the script's inline source map. */
function sourceLineOf(
  maps: Map<string, [number, number][][] | undefined>,
  urls: Map<string, string>,
  frame: CpuProfile["nodes"][number]["callFrame"],
): number {
  if (!maps.has(frame.scriptId)) {
    const url = urls.get(frame.scriptId);
    const json = url?.startsWith("data:") ? atob(url.slice(url.indexOf(",") + 1)) : undefined;
    maps.set(frame.scriptId, json ? decodeMappings(JSON.parse(json).mappings) : undefined);
  }
  const segments = maps.get(frame.scriptId)?.[frame.lineNumber];
  if (!segments?.length) return frame.lineNumber + 1;
  let best = segments[0]!;
  for (const s of segments) if (s[0] <= frame.columnNumber) best = s;
  return best[1] + 1;
}

/** Time per function (self: the sampled frame; total: anywhere on its stack, once per sample) and per file. */
function summarize(profile: CpuProfile, sourceMaps: Map<string, string>) {
  const parent = new Map<number, number>();
  const byId = new Map(profile.nodes.map((n) => [n.id, n]));
  for (const n of profile.nodes) for (const c of n.children ?? []) parent.set(c, n.id);
  const decoded = new Map<string, [number, number][][] | undefined>();
  const shortUrl = (url: string) =>
    url.replace(/^file:\/\/.*?\/(lib|routes|cli|app\.ts|main\.ts|bench)\b/, "$1");
  const keys = new Map<number, string>();
  const key = (id: number) => {
    let k = keys.get(id);
    if (k === undefined) {
      const frame = byId.get(id)!.callFrame;
      // Deno's own modules (ext:) have no source map: their line is of the bundled script.
      const where = frame.url ? `${shortUrl(frame.url)}:${sourceLineOf(decoded, sourceMaps, frame)}` : "";
      k = `${frame.functionName || "(anonymous)"} ${where}`.trim();
      keys.set(id, k);
    }
    return k;
  };
  const fileOf = (id: number) =>
    shortUrl(byId.get(id)!.callFrame.url) || byId.get(id)!.callFrame.functionName;
  const self = new Map<string, number>();
  const total = new Map<string, number>();
  const files = new Map<string, number>();
  const add = (map: Map<string, number>, k: string, v: number) => map.set(k, (map.get(k) ?? 0) + v);
  for (let i = 0; i < profile.samples.length; i++) {
    // timeDeltas[i] is the time before sample i; the time a sample stands for is the gap that follows it.
    const micros = profile.timeDeltas[i + 1] ?? 0;
    const id = profile.samples[i]!;
    add(self, key(id), micros);
    add(files, fileOf(id), micros);
    const seen = new Set<string>();
    for (let at: number | undefined = id; at !== undefined; at = parent.get(at)) {
      const k = key(at);
      if (seen.has(k)) continue;
      add(total, k, micros);
      seen.add(k);
    }
  }
  return { self, total, files };
}

function table(title: string, map: Map<string, number>, requests: number, rows = top): string {
  const sorted = [...map].sort((a, b) => b[1] - a[1]).slice(0, rows);
  return [
    `${title} (µs per request)`,
    ...sorted.map(([k, v]) => `  ${(v / requests).toFixed(3).padStart(8)}  ${k}`),
  ]
    .join("\n");
}

/** Profiles the server on `inspectPort` while wrk loads `url`; prints its summary. */
async function profileUnderLoad(
  label: string,
  inspectPort: number,
  url: string,
  clientCpus: string | undefined,
) {
  await runWrk(url, { seconds: 2, connections: 50, threads: 1, cpus: clientCpus }); // JIT warm-up
  const inspector = await Inspector.connect(inspectPort);
  try {
    await inspector.call("Profiler.enable");
    await inspector.call("Profiler.setSamplingInterval", { interval: intervalMicros });
    await inspector.call("Profiler.start");
    const load = await runWrk(url, { seconds, connections: 50, threads: 1, cpus: clientCpus });
    const { profile } = await inspector.call("Profiler.stop") as { profile: CpuProfile };
    // Enabled only now (it announces every script with its source map), so that it cannot slow the profiled run.
    await inspector.call("Debugger.enable");
    await inspector.call("Debugger.disable");
    const requests = load.requestsPerSec * seconds;
    if (keepDir) {
      await Deno.mkdir(keepDir, { recursive: true });
      await Deno.writeTextFile(
        `${keepDir}/${label.replace(/\W+/g, "_")}.cpuprofile`,
        JSON.stringify(profile),
      );
    }
    const s = summarize(profile, inspector.sourceMaps);
    const sampled = [...s.self.values()].reduce((a, b) => a + b, 0);
    const idle = s.self.get("(idle)") ?? 0;
    console.log(
      `## ${label}: ${load.requestsPerSec.toFixed(0)} req/s under the profiler; ${
        ((sampled - idle) / requests).toFixed(2)
      } µs busy per request (sampled ${(sampled / 1e6).toFixed(1)} s, idle ${(idle / 1e6).toFixed(1)} s)\n`,
    );
    console.log(table("self time by function", s.self, requests));
    console.log(table("\ntotal time by function", s.total, requests));
    console.log(table("\nself time by file", s.files, requests, 15));
    console.log("");
  } finally {
    inspector.close();
  }
}

async function main() {
  if (!hasCommand("wrk")) throw new Error("wrk is not installed");
  const dir = await Deno.makeTempDir({ prefix: "wharf-bench-profile-" });
  const children: { stop(): Promise<void> }[] = [];
  try {
    const wharf = await startWharf(wharfMain, `${dir}/current`, 9229);
    children.push(wharf);
    const wharfUrl = wharf.url;
    const { serverCpus, clientCpus } = await pinServer(wharf.child.pid);
    const servers: { label: string; url: string; inspectPort: number }[] = [];
    if (which.includes("wharf")) servers.push({ label: "wharf", url: wharfUrl, inspectPort: 9229 });
    if (beforeMain) {
      const before = await startWharf(beforeMain, `${dir}/before`, 9232);
      children.push(before);
      await pinServer(before.child.pid);
      servers.push({ label: "before", url: before.url, inspectPort: 9232 });
    }

    const sample = boxName(Math.floor(boxCount / 2));
    const paths = { "box JSON": `/api/v1/box/alice/${sample}`, metadata: `/alice/${sample}` };
    // What the bare servers answer: wharf's bytes (the baseline), and its bytes and headers (the floors).
    const targets = Object.entries(paths).map(([name, path]) => ({ name, path }));
    const { bodiesFile, answersFile } = await captureAnswers(wharfUrl, targets, dir);

    const sameHeaders = new URL("./registry_same_headers_server.ts", import.meta.url).pathname;
    const others = [
      {
        label: "bare",
        script: new URL("./registry_baseline_server.ts", import.meta.url).pathname,
        args: [bodiesFile],
        ready: /baseline listening on (\S+)/,
        inspectPort: 9230,
      },
      {
        label: "floor",
        script: sameHeaders,
        args: ["--protected", answersFile],
        ready: /floor listening on (\S+)/,
        inspectPort: 9231,
      },
      {
        label: "promised",
        script: sameHeaders,
        args: ["--promised", answersFile],
        ready: /promised listening on (\S+)/,
        inspectPort: 9233,
      },
    ];
    for (const o of others.filter((o) => which.includes(o.label))) {
      const child = await startChild(o.script, o.args, o.ready, {}, {
        cpus: serverCpus,
        denoFlags: [`--inspect=127.0.0.1:${o.inspectPort}`],
      });
      children.push(child);
      servers.push({ label: o.label, url: child.match[1]!, inspectPort: o.inspectPort });
    }
    console.log(
      `# JS CPU profiles, ${boxCount} boxes, ${seconds} s per profile, sampling every ${intervalMicros} µs, ` +
        `servers on CPU ${serverCpus ?? "any"}, wrk on CPU ${clientCpus ?? "any"}\n`,
    );
    for (const [name, path] of Object.entries(paths)) {
      for (const s of servers) {
        await profileUnderLoad(`${s.label}, ${name}`, s.inspectPort, `${s.url}${path}`, clientCpus);
      }
    }
  } finally {
    for (const c of children) await c.stop();
    await Deno.remove(dir, { recursive: true }).catch(() => {});
  }
}

/** A wharf child of the checkout whose main.ts is `main`, with `--inspect`, seeded with the benchmark's boxes. */
async function startWharf(main: string, dataDir: string, inspectPort: number) {
  const wharf = await startChild(
    main,
    ["--port", "0", "--data-dir", dataDir, "--log-level", "warn"],
    /wharf listening on (\S+)/,
    { WHARF_REGISTRY_ADMIN_PASSWORD: ADMIN_PASSWORD, WHARF_RATE_LIMIT_RPS: "0", WHARF_SHUTDOWN_GRACE: "2s" },
    { denoFlags: [`--inspect=127.0.0.1:${inspectPort}`] },
  );
  const url = wharf.match[1]!;
  try {
    const api = new RegistryApi(url);
    const adminToken = await api.login("admin", ADMIN_PASSWORD);
    await api.createUser(adminToken, "alice", "alice-password-1");
    await seedBoxes(api, await api.login("alice", "alice-password-1"), "alice", boxCount, 64);
    await settleCheckpoint(url);
  } catch (error) {
    await wharf.stop();
    throw error;
  }
  return { ...wharf, url };
}

/** Waits until the store's checkpoint has caught up with the seed's writes (reads at steady state). */
async function settleCheckpoint(url: string): Promise<void> {
  for (const started = performance.now(); performance.now() - started < 180_000;) {
    const health = await (await fetch(`${url}/health`)).json();
    if (health.checkpoint_index >= health.index) return;
    await new Promise((r) => setTimeout(r, 250));
  }
}

await main();
