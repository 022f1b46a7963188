// Cross-node read-your-writes: before a request is handled, this node's view catches up with every batch any
// node committed before the request arrived, so a client behind a load balancer sees its own writes (and every
// other acknowledged one) whichever node answers next. One read of wharf_head serves every request that arrived
// before it was sent; when the database cannot be asked, requests go on with the view as it is (reads stay up
// through an outage; writes fail on their own commit).

/** The longest a request waits (from its arrival) for the head read and the view to catch up. */
const syncBoundMs = 2_000;
/** After a failed or slow sync, requests skip it for this long (no 2 s wait per request while the database is down). */
const skipAfterFailureMs = 1_000;

export interface ViewSyncSource {
  /** The newest committed Index (wharf_head.last), read now. */
  readHead(): Promise<number>;
  /** This node's applied Index. */
  applied(): number;
  /** Resolves once the view has applied `index`. */
  waitFor(index: number): Promise<void>;
}

export class ViewSync {
  readonly #source: ViewSyncSource;
  /** The head read under way, and the one queued behind it for requests that arrived after it was sent. */
  #current: Promise<void> | undefined;
  #next: Promise<void> | undefined;
  #failedAt = -Infinity;
  /** Head reads, those the view had to wait for (it was behind), and those that failed or took too long. */
  readonly stats = { syncs: 0, waited: 0, failed: 0 };

  constructor(source: ViewSyncSource) {
    this.#source = source;
  }

  /**
   * Resolves once the view includes every batch committed before this call, or at most `syncBoundMs` after it
   * (then the view is used as it is); never rejects.
   */
  sync(): Promise<void> {
    if (this.#failedRecently()) return Promise.resolve();
    // A read already sent may miss a commit acknowledged just before this call: wait for the next one.
    const read = this.#current === undefined ? this.#begin() : this.#next ??= this.#current.then(() => {
      this.#next = undefined;
      return this.#failedRecently() ? undefined : this.#begin();
    });
    return this.#bounded(read);
  }

  #failedRecently(): boolean {
    return performance.now() - this.#failedAt < skipAfterFailureMs;
  }

  #begin(): Promise<void> {
    const read: Promise<void> = this.#readAndCatchUp().finally(() => {
      if (this.#current === read) this.#current = undefined;
    });
    this.#current = read;
    return read;
  }

  /** One head read and the wait for the view to reach it, within the bound; never rejects. */
  async #readAndCatchUp(): Promise<void> {
    this.stats.syncs++;
    const caughtUp = (async () => {
      const head = await this.#source.readHead();
      if (this.#source.applied() >= head) return;
      this.stats.waited++;
      await this.#source.waitFor(head);
    })();
    if (!(await this.#within(caughtUp))) {
      this.stats.failed++;
      this.#failedAt = performance.now();
    }
  }

  /** A caller's wait, bounded from its arrival (a read queued behind a slow one may start late). */
  async #bounded(read: Promise<void>): Promise<void> {
    if (!(await this.#within(read))) this.#failedAt = performance.now();
  }

  /** Whether `work` settled without error within the bound. */
  async #within(work: Promise<void>): Promise<boolean> {
    let timer: ReturnType<typeof setTimeout> | undefined;
    try {
      return await Promise.race([
        work.then(() => true, () => false),
        new Promise<boolean>((resolve) => timer = setTimeout(() => resolve(false), syncBoundMs)),
      ]);
    } finally {
      clearTimeout(timer);
    }
  }
}
