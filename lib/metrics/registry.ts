// A small metrics registry: counters, gauges and histograms with label children resolved once by their callers,
// plus collectors that set gauges at scrape time (lib/metrics/text.ts renders it; docs/operations.md#metrics).

export type MetricType = "counter" | "gauge" | "histogram";

/** Metric and label names Prometheus accepts (ours are fixed in code; checked so a typo fails at start-up). */
const metricName = /^[a-zA-Z_:][a-zA-Z0-9_:]*$/;
const labelName = /^[a-zA-Z_][a-zA-Z0-9_]*$/;

/** One labelled series of a counter or gauge: a plain number field, so an increment is one property write. */
export class ValueChild {
  value = 0;
  constructor(readonly labels: readonly string[]) {}
  inc(by = 1): void {
    this.value += by;
  }
  set(value: number): void {
    this.value = value;
  }
}

/** One labelled histogram: per-bucket counts (not cumulative; summed when rendered), sum and count. */
export class HistogramChild {
  readonly counts: Float64Array;
  sum = 0;
  count = 0;
  constructor(readonly labels: readonly string[], private readonly bounds: Float64Array) {
    this.counts = new Float64Array(bounds.length + 1);
  }
  observe(value: number): void {
    const bounds = this.bounds;
    let i = 0;
    while (i < bounds.length && value > bounds[i]!) i++;
    this.counts[i]!++;
    this.sum += value;
    this.count++;
  }
}

abstract class Family<C> {
  readonly #children = new Map<string, C>();
  constructor(
    readonly name: string,
    readonly help: string,
    readonly type: MetricType,
    readonly labelNames: readonly string[],
  ) {
    if (!metricName.test(name)) throw new Error(`bad metric name ${name}`);
    for (const l of labelNames) if (!labelName.test(l) || l === "le") throw new Error(`bad label ${l}`);
  }

  /** The child for these label values, created on first use: resolve it once, outside the hot path. */
  labels(...values: string[]): C {
    if (values.length !== this.labelNames.length) {
      throw new Error(`${this.name} takes ${this.labelNames.length} label values`);
    }
    const key = values.join("\u0000");
    let child = this.#children.get(key);
    if (!child) {
      child = this.create(values);
      this.#children.set(key, child);
    }
    return child;
  }

  /** Forgets every child (a scrape-time gauge whose label set changes, e.g. per collection). */
  reset(): void {
    this.#children.clear();
  }

  children(): IterableIterator<C> {
    return this.#children.values();
  }

  protected abstract create(values: readonly string[]): C;
}

export class ValueFamily extends Family<ValueChild> {
  protected create(values: readonly string[]): ValueChild {
    return new ValueChild(values);
  }
}

export class HistogramFamily extends Family<HistogramChild> {
  readonly bounds: Float64Array;
  constructor(name: string, help: string, buckets: readonly number[], labelNames: readonly string[]) {
    super(name, help, "histogram", labelNames);
    if (buckets.some((b, i) => i > 0 && b <= buckets[i - 1]!)) {
      throw new Error(`${name}: buckets must increase`);
    }
    this.bounds = Float64Array.from(buckets);
  }
  protected create(values: readonly string[]): HistogramChild {
    return new HistogramChild(values, this.bounds);
  }
}

export type AnyFamily = ValueFamily | HistogramFamily;

/** Request latencies, in seconds: 0.5 ms to 10 s. */
export const latencyBuckets: readonly number[] = [
  0.0005,
  0.001,
  0.0025,
  0.005,
  0.01,
  0.025,
  0.05,
  0.1,
  0.25,
  0.5,
  1,
  2.5,
  5,
  10,
];

export class MetricsRegistry {
  readonly #families = new Map<string, AnyFamily>();
  readonly #collectors: (() => void | Promise<void>)[] = [];

  counter(name: string, help: string, labelNames: readonly string[] = []): ValueFamily {
    if (!name.endsWith("_total")) throw new Error(`counter ${name} must end in _total`);
    return this.#add(new ValueFamily(name, help, "counter", labelNames));
  }

  gauge(name: string, help: string, labelNames: readonly string[] = []): ValueFamily {
    return this.#add(new ValueFamily(name, help, "gauge", labelNames));
  }

  /** An unlabelled counter's one series. */
  counterValue(name: string, help: string): ValueChild {
    return this.counter(name, help).labels();
  }

  /** An unlabelled gauge's one series. */
  gaugeValue(name: string, help: string): ValueChild {
    return this.gauge(name, help).labels();
  }

  /** An unlabelled gauge read from `read` at each scrape (for numbers kept elsewhere or cheap to compute). */
  gaugeFrom(name: string, help: string, read: () => number): void {
    const child = this.gaugeValue(name, help);
    this.onScrape(() => child.set(read()));
  }

  /** An unlabelled counter whose total `read` returns at each scrape (a count kept by the code it counts). */
  counterFrom(name: string, help: string, read: () => number): void {
    const child = this.counterValue(name, help);
    this.onScrape(() => child.set(read()));
  }

  histogram(
    name: string,
    help: string,
    buckets: readonly number[] = latencyBuckets,
    labelNames: readonly string[] = [],
  ): HistogramFamily {
    return this.#add(new HistogramFamily(name, help, buckets, labelNames));
  }

  /** `collect` runs before each scrape (to set gauges whose number is cheaper to compute than to keep). */
  onScrape(collect: () => void | Promise<void>): void {
    this.#collectors.push(collect);
  }

  /** Runs every collector (one that fails leaves its gauges as they were), then hands the families over. */
  async collect(): Promise<readonly AnyFamily[]> {
    for (const c of this.#collectors) {
      try {
        await c();
      } catch {
        // a collector's source is unavailable (a database down): its gauges keep their last values
      }
    }
    return [...this.#families.values()];
  }

  #add<F extends AnyFamily>(family: F): F {
    if (this.#families.has(family.name)) throw new Error(`metric ${family.name} registered twice`);
    this.#families.set(family.name, family);
    return family;
  }
}
