// Named async mutexes: writes to one document (or one uniqueness key) are serialized. A key may also be
// taken shared (readers/writer): shared holders run together, an exclusive holder runs alone.

interface KeyState {
  /** Settles when the last queued exclusive holder has released (so everything queued before it too). */
  lastExclusive: Promise<void>;
  /** Releases of the shared holders queued after `lastExclusive`; an exclusive holder waits for them all. */
  shared: Set<Promise<void>>;
  /** Holders queued or running: the state is dropped when this reaches zero. */
  holders: number;
}

const settled = Promise.resolve();

export class KeyedLocks {
  #keys = new Map<string, KeyState>();

  /**
   * Acquires every key (sorted, so two callers never deadlock) and resolves to a release function. Keys in
   * `sharedKeys` (and not in `keys`) are taken shared. Holders of one key are served in arrival order.
   */
  async acquire(keys: Iterable<string>, sharedKeys: Iterable<string> = []): Promise<() => void> {
    const shared = new Map<string, boolean>();
    for (const key of sharedKeys) shared.set(key, true);
    for (const key of keys) shared.set(key, false);
    const releases: Array<() => void> = [];
    for (const key of [...shared.keys()].sort()) releases.push(await this.#acquireOne(key, shared.get(key)!));
    return () => {
      for (const r of releases.reverse()) r();
    };
  }

  async #acquireOne(key: string, shared: boolean): Promise<() => void> {
    let state = this.#keys.get(key);
    if (!state) this.#keys.set(key, state = { lastExclusive: settled, shared: new Set(), holders: 0 });
    state.holders++;
    let release!: () => void;
    const done = new Promise<void>((resolve) => (release = resolve));
    let previous: Promise<unknown>;
    const sharedGroup = state.shared;
    if (shared) {
      previous = state.lastExclusive;
      sharedGroup.add(done);
    } else {
      previous = sharedGroup.size ? Promise.all([state.lastExclusive, ...sharedGroup]) : state.lastExclusive;
      state.lastExclusive = done;
      state.shared = new Set();
    }
    await previous;
    const held = state;
    return () => {
      release();
      // A finished shared holder need not be awaited by later exclusive holders (keeps the set small).
      if (shared) sharedGroup.delete(done);
      if (--held.holders === 0 && this.#keys.get(key) === held) this.#keys.delete(key);
    };
  }

  get held(): number {
    return this.#keys.size;
  }
}
