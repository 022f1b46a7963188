// Cross-node read-your-writes: before a request is handled, this node's view catches up with every batch any
// node committed before the request arrived, so a client behind a load balancer sees its own writes (and every
// other acknowledged one) whichever node answers next. One read of wharf_head serves every request that arrived
// before it was sent; when the database cannot be asked, requests go on with the view as it is (reads stay up
// through an outage; writes fail on their own commit).

/** How long a request waits for the head read and the view to catch up before it goes on with the view as is. */
const syncBoundMs = 2_000;
/** After a failed sync, requests skip it for this long (no 2 s wait per request while the database is down). */
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
  /** Syncs that had to wait for the view (it was behind the head), and that gave up. */
  readonly stats = { syncs: 0, waited: 0, gaveUp: 0 };

  constructor(source: ViewSyncSource) {
    this.#source = source;
  }

  /** Resolves once the view includes every batch committed before this call (or the bound passed); never rejects. */
  sync(): Promise<void> {
    if (performance.now() - this.#failedAt < skipAfterFailureMs) return Promise.resolve();
    if (!this.#current) return this.#current = this.#start();
    // A read already sent may miss a commit acknowledged just before this call: wait for the next one.
    return this.#next ??= this.#current.then(() => this.#current = this.#start());
  }

  async #start(): Promise<void> {
    this.#next = undefined;
    this.stats.syncs++;
    let timer: ReturnType<typeof setTimeout> | undefined;
    try {
      await Promise.race([
        (async () => {
          const head = await this.#source.readHead();
          if (this.#source.applied() >= head) return;
          this.stats.waited++;
          await this.#source.waitFor(head);
        })(),
        new Promise<never>((_, reject) =>
          timer = setTimeout(() => reject(new Error("sync timed out")), syncBoundMs)
        ),
      ]);
    } catch {
      this.stats.gaveUp++;
      this.#failedAt = performance.now();
    } finally {
      clearTimeout(timer);
      if (!this.#next) this.#current = undefined;
    }
  }
}
