// Helpers for the backup tests: `main.ts backup …` as a child process, registry boxes with uploaded files, and
// a restored server's documents, blobs and events read back over HTTP.

import { assertEquals } from "../helpers/assert.ts";
import type { Client } from "../registry/helpers.ts";
import { type Frame, subscribe } from "../events/stream_helpers.ts";
import { sha256Hex } from "../../lib/store/backup/archive.ts";

const mainPath = new URL("../../main.ts", import.meta.url).pathname;

export interface CommandResult {
  code: number;
  stdout: string;
  stderr: string;
}

function backupCommand(
  args: string[],
  env: Record<string, string>,
  output: "piped" | "null",
  denoFlags: string[] = [],
): Deno.Command {
  return new Deno.Command(Deno.execPath(), {
    args: ["run", "-A", ...denoFlags, mainPath, "backup", ...args],
    env,
    stdin: "null",
    stdout: output,
    stderr: output,
  });
}

/** Runs `deno run -A main.ts backup ARGS` with `env` added to this process's environment. */
export async function runBackup(args: string[], env: Record<string, string> = {}): Promise<CommandResult> {
  const out = await backupCommand(args, env, "piped").output();
  const decoder = new TextDecoder();
  return { code: out.code, stdout: decoder.decode(out.stdout), stderr: decoder.decode(out.stderr) };
}

/**
 * `runBackup` with the child's peak resident memory (VmHWM, KiB), read from /proc every 10 ms while it runs
 * (Linux): the last reading before it exits. `denoFlags` go to `deno run` (e.g. `--v8-flags=…`); `env` is added to
 * this process's environment.
 */
export async function runBackupMeasured(
  args: string[],
  denoFlags: string[] = [],
  env: Record<string, string> = {},
): Promise<CommandResult & { peakKib: number }> {
  const child = backupCommand(args, env, "piped", denoFlags).spawn();
  let peakKib = 0;
  let running = true;
  const watching = (async () => {
    while (running) {
      const status = await Deno.readTextFile(`/proc/${child.pid}/status`).catch(() => "");
      // An exited child's status (a zombie's, or none once reaped) has no VmHWM line.
      const m = /^VmHWM:\s+(\d+) kB/m.exec(status);
      if (!m) break;
      peakKib = Number(m[1]);
      await new Promise((r) => setTimeout(r, 10));
    }
  })();
  const out = await child.output();
  running = false;
  await watching;
  const decoder = new TextDecoder();
  return { code: out.code, stdout: decoder.decode(out.stdout), stderr: decoder.decode(out.stderr), peakKib };
}

/** Starts `deno run -A main.ts backup ARGS` and returns the child, for a kill mid-run. */
export function spawnBackup(args: string[], env: Record<string, string> = {}): Deno.ChildProcess {
  return backupCommand(args, env, "null").spawn();
}

/** Deterministic file content of `n` bytes for `seed`. */
export function content(seed: number, n: number): Uint8Array<ArrayBuffer> {
  const out = new Uint8Array(n);
  for (let i = 0; i < n; i++) out[i] = (i * 31 + seed * 7 + (i >> 8)) & 0xff;
  return out;
}

/** Creates provider `name` on alice/devbox 1.0.0 and uploads `bytes` as its file. */
export async function uploadProvider(
  api: Client,
  token: string,
  name: string,
  bytes: Uint8Array<ArrayBuffer>,
) {
  const path = `/api/v1/box/alice/devbox/version/1.0.0/provider/${name}`;
  const p = await api.post("/api/v1/box/alice/devbox/version/1.0.0/providers", { provider: { name } }, {
    token,
  });
  assertEquals(p.status, 200, p.text);
  const prepared = (await api.get(`${path}/upload`, { token })).body;
  const r = await fetch(prepared.upload_path, { method: "PUT", body: bytes });
  assertEquals(r.status, 200, await r.text());
}

/** The sha256 of provider `name`'s file as the server at `url` hands it out. */
export async function downloadSha(url: string, token: string, name: string): Promise<string> {
  const r = await fetch(`${url}/alice/boxes/devbox/versions/1.0.0/providers/${name}.box`, {
    headers: { Authorization: `Bearer ${token}` },
  });
  assertEquals(r.status, 200, `download of ${name}`);
  return sha256Hex(new Uint8Array(await r.arrayBuffer()));
}

/** A test document write acknowledged by the server. */
export interface Ack {
  kind: "items" | "packed";
  id: string;
  body: Record<string, unknown>;
  index: number;
}

/** Writes test documents (items and packed, new ones and one hot one per writer) until `stop.now`. */
export async function writeLoop(url: string, writer: number, acks: Ack[], stop: { now: boolean }) {
  const kind = writer % 2 === 0 ? "items" : "packed";
  for (let seq = 0; !stop.now; seq++) {
    const id = seq % 2 === 0 ? `w${writer}-s${seq}` : `hot-w${writer}`;
    const body = { writer, seq, pad: "x".repeat(seq % 5 * 40) };
    const res = await fetch(`${url}/v1/_test/${kind}/${id}`, { method: "PUT", body: JSON.stringify(body) });
    assertEquals(res.status, 200, `write ${kind}/${id}`);
    acks.push({ kind, id, body, index: (await res.json()).index });
  }
}

/** The newest acknowledged write of each document at or below `index`. */
export function stateAt(acks: Ack[], index: number): Map<string, Ack> {
  const latest = new Map<string, Ack>();
  for (const a of acks) {
    if (a.index > index) continue;
    const key = `${a.kind}/${a.id}`;
    const seen = latest.get(key);
    if (!seen || seen.index < a.index) latest.set(key, a);
  }
  return latest;
}

/** The snapshot index a `backup create` summary line names. */
export function snapshotIndex(summary: string): number {
  const m = /snapshot at index (\d+)/.exec(summary);
  if (!m) throw new Error(`no snapshot index in: ${summary}`);
  return Number(m[1]);
}

/** Every entry of an archive with its payload offset (for the corruption test). */
export { ArchiveReader } from "../../lib/store/backup/archive.ts";

/**
 * The server at `url` holds exactly the test documents' state at `index`: each as its newest write at or below
 * it, none written only after it (nothing half-written), none missing.
 */
export async function assertStateAt(url: string, acks: Ack[], index: number): Promise<void> {
  const state = stateAt(acks, index);
  for (const [key, ack] of state) {
    const res = await fetch(`${url}/v1/_test/${key}`);
    assertEquals(res.status, 200, `${key} restored`);
    const stored = await res.json();
    assertEquals({ index: stored.index, doc: stored.doc }, { index: ack.index, doc: ack.body }, key);
  }
  const afterOnly = acks.filter((a) => a.index > index && !state.has(`${a.kind}/${a.id}`));
  for (const a of afterOnly.slice(0, 20)) {
    const res = await fetch(`${url}/v1/_test/${a.kind}/${a.id}`);
    assertEquals(res.status, 404, `${a.kind}/${a.id} was written after the snapshot`);
    await res.body?.cancel();
  }
}

/** Data frames (batches with events) of the server at `url` up to `upTo`, from the oldest retained one. */
export async function eventsUpTo(url: string, upTo: number): Promise<Frame[]> {
  const stream = await subscribe(url, "");
  const frames: Frame[] = [];
  try {
    for (;;) {
      const f = await stream.nextData(3_000).catch(() => undefined);
      if (!f || f.Index! > upTo) return frames;
      frames.push(f);
      if (f.Index === upTo) return frames;
    }
  } finally {
    await stream.close();
  }
}
