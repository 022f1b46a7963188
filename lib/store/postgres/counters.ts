// Usage counters shared by every node: each node counts in memory and flushes its increments (added to the
// stored value) and its last-set values every few seconds, then reads back what all nodes flushed.

import type { Counters } from "../counters.ts";
import type { Sql } from "./schema.ts";

export class PgCounters implements Counters {
  readonly name: string;
  readonly #sql: Sql;
  #values = new Map<string, number>();
  #added = new Map<string, number>();
  #set = new Map<string, number>();
  #deleted = new Set<string>();

  private constructor(sql: Sql, name: string) {
    this.#sql = sql;
    this.name = name;
  }

  static async open(sql: Sql, name: string): Promise<PgCounters> {
    const c = new PgCounters(sql, name);
    await c.#reload();
    return c;
  }

  get(key: string): number {
    return this.#values.get(key) ?? 0;
  }

  add(key: string, by = 1): number {
    const v = this.get(key) + by;
    this.#values.set(key, v);
    if (this.#set.has(key)) this.#set.set(key, v);
    else this.#added.set(key, (this.#added.get(key) ?? 0) + by);
    this.#deleted.delete(key);
    return v;
  }

  set(key: string, value: number): void {
    this.#values.set(key, value);
    this.#set.set(key, value);
    this.#added.delete(key);
    this.#deleted.delete(key);
  }

  delete(key: string): void {
    this.#values.delete(key);
    this.#added.delete(key);
    this.#set.delete(key);
    this.#deleted.add(key);
  }

  async flush(): Promise<void> {
    const added = this.#added, set = this.#set, deleted = this.#deleted;
    this.#added = new Map();
    this.#set = new Map();
    this.#deleted = new Set();
    try {
      await this.#sql.begin(async (tx) => {
        if (deleted.size) {
          await tx`DELETE FROM wharf_counters WHERE name = ${this.name} AND key = ANY(${[...deleted]})`;
        }
        if (added.size) {
          await tx`
            INSERT INTO wharf_counters (name, key, value)
            SELECT ${this.name}, k, v FROM json_to_recordset(${
            JSON.stringify(entries(added))
          }::text::json) AS x(k text, v float8)
            ON CONFLICT (name, key) DO UPDATE SET value = wharf_counters.value + excluded.value`;
        }
        if (set.size) {
          await tx`
            INSERT INTO wharf_counters (name, key, value)
            SELECT ${this.name}, k, v FROM json_to_recordset(${
            JSON.stringify(entries(set))
          }::text::json) AS x(k text, v float8)
            ON CONFLICT (name, key) DO UPDATE SET value = excluded.value`;
        }
      });
    } catch (err) {
      // Keep what was not stored for the next flush (on top of anything counted meanwhile).
      for (const [k, v] of added) if (!this.#set.has(k)) this.#added.set(k, (this.#added.get(k) ?? 0) + v);
      for (const [k, v] of set) if (!this.#set.has(k) && !this.#added.has(k)) this.#set.set(k, v);
      for (const k of deleted) if (!this.#values.has(k)) this.#deleted.add(k);
      throw err;
    }
    await this.#reload();
  }

  /** Takes the stored values (every node's flushes), keeping changes counted here since. */
  async #reload(): Promise<void> {
    const rows = await this.#sql`SELECT key, value FROM wharf_counters WHERE name = ${this.name}`;
    const values = new Map<string, number>();
    for (const r of rows) values.set(r.key as string, Number(r.value));
    for (const [k, v] of this.#added) values.set(k, (values.get(k) ?? 0) + v);
    for (const [k, v] of this.#set) values.set(k, v);
    for (const k of this.#deleted) values.delete(k);
    this.#values = values;
  }
}

function entries(values: Map<string, number>): Array<{ k: string; v: number }> {
  return [...values].map(([k, v]) => ({ k, v }));
}
