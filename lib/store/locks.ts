// Named async mutexes: writes to one document (or one uniqueness key) are serialized.

export class KeyedLocks {
  #tails = new Map<string, Promise<void>>();

  /** Acquires every key (sorted, so two callers never deadlock) and resolves to a release function. */
  async acquire(keys: Iterable<string>): Promise<() => void> {
    const sorted = [...new Set(keys)].sort();
    const releases: Array<() => void> = [];
    for (const key of sorted) releases.push(await this.#acquireOne(key));
    return () => {
      for (const r of releases.reverse()) r();
    };
  }

  async #acquireOne(key: string): Promise<() => void> {
    const previous = this.#tails.get(key) ?? Promise.resolve();
    let release!: () => void;
    const current = new Promise<void>((resolve) => (release = resolve));
    const tail = previous.then(() => current);
    this.#tails.set(key, tail);
    await previous;
    return () => {
      release();
      if (this.#tails.get(key) === tail) this.#tails.delete(key);
    };
  }

  get held(): number {
    return this.#tails.size;
  }
}
