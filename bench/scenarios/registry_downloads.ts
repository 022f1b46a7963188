// Registry downloads against nginx's sendfile: a BENCH_DOWNLOAD_MIB (256) box uploaded to wharf, then fetched by
// BENCH_DOWNLOAD_CLIENTS (4) concurrent `curl -o /dev/null` from the box's download URL, against an nginx of our
// own (`sendfile on`, one worker, loopback port, temp config) serving the same bytes from disk, and against two
// bare Deno.serve ways to send a file (bench/download_floor_server.ts), in BENCH_DOWNLOAD_ROUNDS (5) interleaved
// rounds; servers pinned to the last CPU and the clients to the others, as in registry_reads.

import { cpuSecondsOf, type Figure, hasCommand, median, pinServer, startChild } from "../lib.ts";
import { createBigBox, startBenchRegistry, timeShell } from "../registry_server.ts";

const fileMiB = Number(Deno.env.get("BENCH_DOWNLOAD_MIB") ?? 256);
const clients = Number(Deno.env.get("BENCH_DOWNLOAD_CLIENTS") ?? 4);
const roundCount = Number(Deno.env.get("BENCH_DOWNLOAD_ROUNDS") ?? 5);

/** One timed download burst: MiB/s over all clients, and the server's CPU seconds per GiB sent. */
interface Burst {
  mibPerSec: number;
  cpuPerGiB: number;
}

export default async function run(): Promise<{ title: string; figures: Figure[]; notes: string[] }> {
  const nginxPath = ["nginx", "/usr/sbin/nginx"].find((p) => hasCommand(p));
  if (!nginxPath) throw new Error("nginx is not installed (Debian package nginx)");
  if (!hasCommand("curl")) throw new Error("curl is not installed");
  const registry = await startBenchRegistry({ WHARF_MAX_UPLOAD_BYTES: String(64 * 1024 ** 3) });
  let nginx: Deno.ChildProcess | undefined;
  let floor: Awaited<ReturnType<typeof startChild>> | undefined;
  try {
    const { api, token, server, dir } = registry;
    const file = `${dir}/big.box`;
    await timeShell(`head -c ${fileMiB}M /dev/urandom > '${file}'`);
    const B = await createBigBox(api, token);
    const prepared = await api.expectOk("GET", `${B}/version/1.0.0/provider/virtualbox/upload`, { token });
    await timeShell(`curl -sS --fail -T '${file}' '${prepared.upload_path}' -o /dev/null`);
    await api.expectOk("PUT", `${B}/version/1.0.0/release`, { token });

    const { pin, serverCpus, clientCpus } = await pinServer(server.process.pid);

    const nginxPort = freePort();
    const nginxDir = `${dir}/nginx`;
    await Deno.mkdir(nginxDir);
    await Deno.writeTextFile(`${nginxDir}/nginx.conf`, nginxConfig(nginxDir, dir, nginxPort));
    const nginxArgs = ["-p", nginxDir, "-c", `${nginxDir}/nginx.conf`, "-e", `${nginxDir}/error.log`];
    nginx = new Deno.Command(serverCpus === undefined ? nginxPath : "taskset", {
      args: serverCpus === undefined ? nginxArgs : ["-c", serverCpus, nginxPath, ...nginxArgs],
      stdout: "null",
      stderr: "null",
    }).spawn();
    const nginxUrl = `http://127.0.0.1:${nginxPort}/big.box`;
    await waitFor(nginxUrl);
    const floorScript = new URL("../download_floor_server.ts", import.meta.url).pathname;
    floor = await startChild(floorScript, [file], /downloads listening on (\S+)/, {}, { cpus: serverCpus });

    const contenders = [
      {
        name: "wharf",
        url: `${server.url}/alice/boxes/bigbox/versions/1.0.0/providers/virtualbox.box`,
        pid: server.process.pid,
      },
      { name: "nginx", url: nginxUrl, pid: nginx.pid },
      { name: "Deno.serve, 1 MiB JS byte stream", url: `${floor.match[1]}/stream`, pid: floor.child.pid },
      { name: "Deno.serve, FsFile.readable", url: `${floor.match[1]}/readable`, pid: floor.child.pid },
    ];
    const bytes = fileMiB * 1024 * 1024;
    const burst = async (url: string, pid: number): Promise<Burst> => {
      const cpuBefore = cpuSecondsOf(pid);
      const started = performance.now();
      const outs = await Promise.all(Array.from({ length: clients }, () => download(url, clientCpus)));
      const seconds = (performance.now() - started) / 1000;
      const cpu = cpuSecondsOf(pid) - cpuBefore;
      for (const got of outs) {
        if (got !== bytes) throw new Error(`${url}: downloaded ${got} bytes, expected ${bytes}`);
      }
      return { mibPerSec: (clients * fileMiB) / seconds, cpuPerGiB: cpu / ((clients * fileMiB) / 1024) };
    };
    // Unmeasured first: page cache, JIT.
    for (const c of contenders) await burst(c.url, c.pid);
    const results = new Map<string, Burst[]>(contenders.map((c) => [c.name, []]));
    for (let round = 0; round < roundCount; round++) {
      const order = round % 2 === 0 ? contenders : [...contenders].reverse();
      for (const c of order) results.get(c.name)!.push(await burst(c.url, c.pid));
    }

    const nginxRuns = results.get("nginx")!;
    const figures: Figure[] = [];
    const notes: string[] = [
      `${clients} concurrent \`curl -sS --fail -o /dev/null URL\` per burst (MiB/s = ${clients} × ${fileMiB} MiB ÷ ` +
      `wall time), ${roundCount} rounds, the order reversed every other round after one unmeasured burst each; ` +
      "figures are medians, ratios the medians of per-round ratios; CPU = the server process's user + system " +
      "seconds per GiB sent",
      `nginx ${nginxPath}: one worker, no master, \`sendfile on; tcp_nopush on;\`, access log off, serving ` +
      `${file} (the bytes uploaded); wharf serves its stored blob of them`,
      pin ? `servers pinned to CPU ${serverCpus}, curl to CPU ${clientCpus}` : "unpinned",
    ];
    for (const c of contenders) {
      if (c.name === "nginx") continue;
      const runs = results.get(c.name)!;
      const ratios = runs.map((r, i) => r.mibPerSec / nginxRuns[i]!.mibPerSec);
      figures.push({
        name: `${c.name}: ${clients} × ${fileMiB} MiB download, MiB/s`,
        value: median(runs.map((r) => r.mibPerSec)),
        unit: "MiB/s",
        baseline: { name: "nginx sendfile", value: median(nginxRuns.map((r) => r.mibPerSec)) },
        target: c.name === "wharf" ? "report" : undefined,
      });
      figures.push({
        name: `${c.name}: server CPU per GiB sent`,
        value: median(runs.map((r) => r.cpuPerGiB)),
        unit: "s",
        baseline: { name: "nginx", value: median(nginxRuns.map((r) => r.cpuPerGiB)) },
      });
      notes.push(
        `${c.name} / nginx per round: ${ratios.map((r) => r.toFixed(2)).join(", ")} (median ${
          median(ratios).toFixed(2)
        }); MiB/s ${runs.map((r) => r.mibPerSec.toFixed(0)).join(", ")}; CPU s/GiB ${
          runs.map((r) => r.cpuPerGiB.toFixed(2)).join(", ")
        }`,
      );
    }
    notes.push(
      `nginx MiB/s per round ${nginxRuns.map((r) => r.mibPerSec.toFixed(0)).join(", ")}; CPU s/GiB ${
        nginxRuns.map((r) => r.cpuPerGiB.toFixed(2)).join(", ")
      }`,
    );
    notes.push(`load average at the end: ${Deno.loadavg().map((l) => l.toFixed(1)).join(" ")}`);
    return {
      title: `Registry downloads of a ${fileMiB} MiB box, ${clients} at a time, against nginx`,
      figures,
      notes,
    };
  } finally {
    await floor?.stop();
    if (nginx) {
      try {
        nginx.kill("SIGTERM");
      } catch { /* gone */ }
      await nginx.status;
    }
    await registry.close();
  }
}

/** Downloads `url` to /dev/null with curl (pinned to `cpus` when given); returns the bytes received. */
async function download(url: string, cpus: string | undefined): Promise<number> {
  const curl = ["curl", "-sS", "--fail", "-o", "/dev/null", "-w", "%{size_download}", url];
  const out = await new Deno.Command(cpus === undefined ? "curl" : "taskset", {
    args: cpus === undefined ? curl.slice(1) : ["-c", cpus, ...curl],
    stdout: "piped",
    stderr: "piped",
  }).output();
  if (!out.success) throw new Error(`curl ${url}: ${new TextDecoder().decode(out.stderr)}`);
  return Number(new TextDecoder().decode(out.stdout));
}

/** A loopback port free right now (for nginx, which cannot listen on port 0 and tell us the port). */
function freePort(): number {
  const listener = Deno.listen({ hostname: "127.0.0.1", port: 0 });
  const port = (listener.addr as Deno.NetAddr).port;
  listener.close();
  return port;
}

async function waitFor(url: string, limitMs = 10_000): Promise<void> {
  const started = performance.now();
  for (;;) {
    try {
      const response = await fetch(url, { method: "HEAD" });
      await response.body?.cancel();
      if (response.ok) return;
    } catch {
      // not listening yet
    }
    if (performance.now() - started > limitMs) throw new Error(`${url} did not answer`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

/** nginx without root: every path it writes under `prefix`, the files served from `root`. */
function nginxConfig(prefix: string, root: string, port: number): string {
  return [
    "daemon off;",
    "master_process off;",
    "worker_processes 1;",
    `pid ${prefix}/nginx.pid;`,
    `error_log ${prefix}/error.log;`,
    "events { worker_connections 256; }",
    "http {",
    "  access_log off;",
    "  sendfile on;",
    "  tcp_nopush on;",
    "  default_type application/octet-stream;",
    ...["client_body", "proxy", "fastcgi", "uwsgi", "scgi"].map((t) => `  ${t}_temp_path ${prefix}/${t};`),
    `  server { listen 127.0.0.1:${port}; root ${root}; }`,
    "}",
    "",
  ].join("\n");
}
