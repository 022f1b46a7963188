// An append-mostly index of document ids by when they were written (a commit index, or a time string), so
// a list refresh visits only what changed since its previous phase instead of scanning every document.

interface TimeEntry<K> {
  time: K;
  id: string;
}

export class TimeIndex<K extends string | number = string> {
  /** Ascending by time. An id may appear several times (once per write): readers check the current doc. */
  #entries: TimeEntry<K>[] = [];

  constructor(initial: Iterable<TimeEntry<K>> = []) {
    this.#entries = [...initial].sort(byTime);
  }

  get size(): number {
    return this.#entries.length;
  }

  /** Records that `id` was written at `time`; times almost always arrive in order. */
  add(time: K, id: string): void {
    const last = this.#entries[this.#entries.length - 1];
    if (!last || last.time <= time) {
      this.#entries.push({ time, id });
      return;
    }
    this.#entries.splice(this.#firstAtOrAfter(time), 0, { time, id });
  }

  /** Distinct ids with an entry at or after `time`, newest entries first. */
  idsSince(time: K): string[] {
    const seen = new Set<string>();
    for (let i = this.#entries.length - 1; i >= 0; i--) {
      const e = this.#entries[i]!;
      if (e.time < time) break;
      seen.add(e.id);
    }
    return [...seen];
  }

  /** Replaces the entries (used to drop stale ones once they outnumber the live documents). */
  rebuild(current: Iterable<TimeEntry<K>>): void {
    this.#entries = [...current].sort(byTime);
  }

  #firstAtOrAfter(time: K): number {
    let lo = 0;
    let hi = this.#entries.length;
    while (lo < hi) {
      const mid = (lo + hi) >> 1;
      if (this.#entries[mid]!.time < time) lo = mid + 1;
      else hi = mid;
    }
    return lo;
  }
}

function byTime<K extends string | number>(a: TimeEntry<K>, b: TimeEntry<K>): number {
  return a.time < b.time ? -1 : a.time > b.time ? 1 : 0;
}
