// Import progress: on a terminal, a live line per file in flight (bytes, rate, ETA) under an overall bar,
// redrawn in place; otherwise plain lines (start, every 10 s while a file runs, end).

export interface ProgressOutput {
  /** Writes text as is (no newline added). */
  write(text: string): void;
  terminal: boolean;
}

interface InFlight {
  label: string;
  total: number | undefined;
  bytes: number;
  started: number;
  lastPlain: number;
}

export function formatBytes(n: number): string {
  const units = ["B", "KiB", "MiB", "GiB", "TiB"];
  let v = n;
  let u = 0;
  while (v >= 1024 && u < units.length - 1) {
    v /= 1024;
    u++;
  }
  return u === 0 ? `${n} B` : `${v.toFixed(1)} ${units[u]}`;
}

function formatDuration(seconds: number): string {
  if (!Number.isFinite(seconds)) return "--:--";
  const s = Math.round(seconds);
  const h = Math.floor(s / 3600);
  const m = Math.floor((s % 3600) / 60);
  const pad = (x: number) => String(x).padStart(2, "0");
  return h ? `${h}:${pad(m)}:${pad(s % 60)}` : `${m}:${pad(s % 60)}`;
}

export class Progress {
  readonly #out: ProgressOutput;
  readonly #files = new Map<number, InFlight>();
  #next = 0;
  #drawnLines = 0;
  #timer: ReturnType<typeof setInterval> | undefined;
  filesDone = 0;
  filesQueued = 0;
  bytesDone = 0;

  constructor(out: ProgressOutput) {
    this.#out = out;
    if (out.terminal) {
      this.#timer = setInterval(() => this.#draw(), 250);
      Deno.unrefTimer(this.#timer);
    }
  }

  /** A line of news (box created, version released, a failure): above the live lines on a terminal. */
  line(text: string): void {
    this.#clear();
    this.#out.write(text + "\n");
    this.#draw();
  }

  queued(): void {
    this.filesQueued++;
  }

  /** A file copy starts; the handle is passed to advanced/finished. */
  start(label: string): number {
    const id = this.#next++;
    this.#files.set(id, { label, total: undefined, bytes: 0, started: Date.now(), lastPlain: Date.now() });
    return id;
  }

  sized(id: number, total: number | undefined): void {
    const f = this.#files.get(id);
    if (!f) return;
    f.total = total;
    if (!this.#out.terminal) {
      this.#out.write(`copying ${f.label}${total !== undefined ? ` (${formatBytes(total)})` : ""}\n`);
    }
  }

  advanced(id: number, bytes: number): void {
    const f = this.#files.get(id);
    if (!f) return;
    f.bytes += bytes;
    this.bytesDone += bytes;
    if (!this.#out.terminal && Date.now() - f.lastPlain >= 10_000) {
      f.lastPlain = Date.now();
      this.#out.write(`  ${this.#fileText(f)}\n`);
    }
  }

  /** The file starts over (a transient failure): its bytes so far no longer count. */
  restart(id: number, why: string): void {
    const f = this.#files.get(id);
    if (!f) return;
    this.bytesDone -= f.bytes;
    f.bytes = 0;
    f.started = Date.now();
    this.line(`retrying ${f.label}: ${why}`);
  }

  finished(id: number, outcome: { ok: true } | { ok: false; error: string }): void {
    const f = this.#files.get(id);
    if (!f) return;
    this.#files.delete(id);
    this.filesDone++;
    const seconds = (Date.now() - f.started) / 1000;
    if (outcome.ok) {
      const rate = seconds > 0 ? `, ${formatBytes(f.bytes / seconds)}/s` : "";
      this.line(`copied ${f.label}: ${formatBytes(f.bytes)} in ${seconds.toFixed(1)} s${rate}`);
    } else {
      this.bytesDone -= f.bytes;
      this.line(`FAILED ${f.label}: ${outcome.error}`);
    }
  }

  #fileText(f: InFlight): string {
    const seconds = Math.max((Date.now() - f.started) / 1000, 0.001);
    const rate = f.bytes / seconds;
    const of = f.total !== undefined ? ` / ${formatBytes(f.total)}` : "";
    const eta = f.total !== undefined && rate > 0
      ? `  ETA ${formatDuration((f.total - f.bytes) / rate)}`
      : "";
    return `${f.label}  ${formatBytes(f.bytes)}${of}  ${formatBytes(rate)}/s${eta}`;
  }

  #clear(): void {
    if (!this.#out.terminal || this.#drawnLines === 0) return;
    this.#out.write(`\x1b[${this.#drawnLines}A\x1b[0J`);
    this.#drawnLines = 0;
  }

  #draw(): void {
    if (!this.#out.terminal) return;
    this.#clear();
    const width = 30;
    const share = this.filesQueued ? this.filesDone / this.filesQueued : 0;
    const fill = Math.round(share * width);
    const lines = [...this.#files.values()].map((f) => `  ${this.#fileText(f)}`);
    lines.push(
      `[${"#".repeat(fill)}${".".repeat(width - fill)}] ${this.filesDone}/${this.filesQueued} files, ` +
        `${formatBytes(this.bytesDone)}`,
    );
    this.#out.write(lines.map((l) => l + "\n").join(""));
    this.#drawnLines = lines.length;
  }

  close(): void {
    if (this.#timer) clearInterval(this.#timer);
    this.#clear();
  }
}
