// What the registry read benchmarks compare wharf with: wharf's own answers captured once (bytes and headers),
// and the servers that replay them — the bare baseline, the same-headers reference, the protected floor and the
// promised-work floor (bench/registry_baseline_server.ts, bench/registry_same_headers_server.ts).

import { startChild } from "./lib.ts";

/** Response headers every Deno.serve answer carries: left out of the header comparison. */
const transportHeaders = new Set(["date", "content-length", "vary"]);

export interface CapturedAnswers {
  /** path → { contentType, bodyBase64 }: the baseline's input. */
  bodiesFile: string;
  /** path → { headers (without X-Request-Id), bodyBase64 }: the same-headers servers' input. */
  answersFile: string;
  /** The names of the headers wharf sent on each target (by its name), transport headers left out. */
  sentHeaders: Record<string, string[]>;
}

/** GETs each target from wharf once (each must answer 200) and writes what the replaying servers read, in `dir`. */
export async function captureAnswers(
  serverUrl: string,
  targets: readonly { name: string; path: string }[],
  dir: string,
): Promise<CapturedAnswers> {
  const canned: Record<string, { contentType: string; bodyBase64: string }> = {};
  const answers: Record<string, { headers: [string, string][]; bodyBase64: string }> = {};
  const sentHeaders: Record<string, string[]> = {};
  for (const t of targets) {
    const response = await fetch(`${serverUrl}${t.path}`);
    const bytes = new Uint8Array(await response.arrayBuffer());
    if (response.status !== 200) throw new Error(`${t.path} → ${response.status}`);
    const bodyBase64 = btoa(Array.from(bytes, (b) => String.fromCharCode(b)).join(""));
    canned[t.path] = {
      contentType: response.headers.get("content-type") ?? "application/json",
      bodyBase64,
    };
    // Everything wharf sent but the transport's own headers, for the same-headers reference and the notes.
    const headers = [...response.headers].filter(([k]) => !transportHeaders.has(k));
    sentHeaders[t.name] = headers.map(([k]) => k);
    answers[t.path] = { headers: headers.filter(([k]) => k !== "x-request-id"), bodyBase64 };
  }
  const bodiesFile = `${dir}/bodies.json`;
  await Deno.writeTextFile(bodiesFile, JSON.stringify(canned));
  const answersFile = `${dir}/answers.json`;
  await Deno.writeTextFile(answersFile, JSON.stringify(answers));
  return { bodiesFile, answersFile, sentHeaders };
}

export type ChildServer = Awaited<ReturnType<typeof startChild>>;

/** The servers replaying wharf's answers, each started pinned to `cpus` (when given). */
export interface ReplayServers {
  baseline: ChildServer;
  reference: ChildServer;
  floor: ChildServer;
  promised: ChildServer;
  stop(): Promise<void>;
}

/** Starts the baseline, the same-headers reference, the protected floor and the promised-work floor. */
export async function startReplayServers(
  captured: CapturedAnswers,
  cpus: string | undefined,
): Promise<ReplayServers> {
  const started: ChildServer[] = [];
  const start = async (script: string, args: string[], ready: RegExp) => {
    const child = await startChild(new URL(script, import.meta.url).pathname, args, ready, {}, { cpus });
    started.push(child);
    return child;
  };
  const stop = async () => {
    for (const child of started) await child.stop();
  };
  try {
    const sameHeaders = "./registry_same_headers_server.ts";
    return {
      baseline: await start(
        "./registry_baseline_server.ts",
        [captured.bodiesFile],
        /baseline listening on (\S+)/,
      ),
      reference: await start(sameHeaders, [captured.answersFile], /reference listening on (\S+)/),
      floor: await start(sameHeaders, ["--protected", captured.answersFile], /floor listening on (\S+)/),
      promised: await start(sameHeaders, ["--promised", captured.answersFile], /promised listening on (\S+)/),
      stop,
    };
  } catch (err) {
    await stop();
    throw err;
  }
}
