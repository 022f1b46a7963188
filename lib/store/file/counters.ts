// Usage counters (download counts, last-used times): in memory, flushed every few seconds and at
// shutdown to data/usage/<name>.json, never through the event log.

import { atomicWrite, ensureDir } from "./fsutil.ts";
import type { Counters } from "../counters.ts";

export class UsageCounters implements Counters {
  readonly path: string;
  #values: Record<string, number> = {};
  #dirty = false;

  private constructor(path: string) {
    this.path = path;
  }

  static async open(dir: string, name: string): Promise<UsageCounters> {
    await ensureDir(dir);
    const c = new UsageCounters(`${dir}/${name}.json`);
    try {
      const parsed = JSON.parse(await Deno.readTextFile(c.path));
      if (parsed && typeof parsed === "object") c.#values = parsed;
    } catch {
      // Missing or unreadable counters start from zero: they are approximate by design.
    }
    return c;
  }

  get(key: string): number {
    return this.#values[key] ?? 0;
  }

  add(key: string, by = 1): number {
    this.#dirty = true;
    return (this.#values[key] = this.get(key) + by);
  }

  set(key: string, value: number): void {
    this.#dirty = true;
    this.#values[key] = value;
  }

  delete(key: string): void {
    if (key in this.#values) {
      delete this.#values[key];
      this.#dirty = true;
    }
  }

  async flush(): Promise<void> {
    if (!this.#dirty) return;
    this.#dirty = false;
    await atomicWrite(this.path, new TextEncoder().encode(JSON.stringify(this.#values)));
  }
}
