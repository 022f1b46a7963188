// One request to a provider shared by every caller that wants its answer at the same time (single flight), the
// answer kept for a while and a failure answered again for a while: a flood of logins against a slow or dead
// provider is one request to it at a time, not one per login (docs/security.md#openid-providers).

/** Concurrent runs for one key share one promise: the work runs once until it settles. */
export class SingleFlight<T> {
  readonly #flights = new Map<string, Promise<T>>();

  run(key: string, work: () => Promise<T>): Promise<T> {
    const current = this.#flights.get(key);
    if (current) return current;
    // The flight is in the map before `work` starts (a microtask later), so even a `work` that throws at once
    // settles it and the entry goes; only this flight's entry is removed.
    const flight: Promise<T> = Promise.resolve().then(work).finally(() => {
      if (this.#flights.get(key) === flight) this.#flights.delete(key);
    });
    this.#flights.set(key, flight);
    return flight;
  }
}

export interface SharedFetchOptions {
  /** How long an answer is used before it is fetched again (0: every call past a flight fetches). */
  maxAgeMs: number;
  /** How long a failure is answered again before the provider is asked again. */
  retryMs: number;
  /** Hears each failed fetch once, whatever the number of callers that shared it. */
  onFailure?: (error: Error) => void;
}

/** One provider answer: fetched by one flight at a time, kept `maxAgeMs`, a failure answered `retryMs`. */
export class SharedFetch<T> {
  readonly #fetch: () => Promise<T>;
  readonly #options: SharedFetchOptions;
  readonly #flight = new SingleFlight<T>();
  #answer?: { value: T; at: number };
  #failure?: { error: Error; at: number };

  constructor(fetch: () => Promise<T>, options: SharedFetchOptions) {
    this.#fetch = fetch;
    this.#options = options;
  }

  get(): Promise<T> {
    const now = Date.now();
    if (this.#answer && now - this.#answer.at < this.#options.maxAgeMs) {
      return Promise.resolve(this.#answer.value);
    }
    if (this.#failure && now - this.#failure.at < this.#options.retryMs) {
      return Promise.reject(this.#failure.error);
    }
    return this.#flight.run("", async () => {
      try {
        const value = await this.#fetch();
        this.#answer = { value, at: Date.now() };
        this.#failure = undefined;
        return value;
      } catch (err) {
        const error = err instanceof Error ? err : new Error(String(err));
        this.#failure = { error, at: Date.now() };
        this.#options.onFailure?.(error);
        throw error;
      }
    });
  }
}
