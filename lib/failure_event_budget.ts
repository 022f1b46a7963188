// How many durable events failed logins may write, whatever names a stranger sends: per window (a minute) the
// first few failures of each client address, and at most so many on the node, are written in full; the others
// are only counted, and a window that counted some ends in one summary of them. Memory only, per node.

export interface FailureBudgetOptions {
  /** Failures of one client address written in full per window. */
  perAddress: number;
  /** Failures written in full per window on this node, all addresses together. */
  perNode: number;
  windowMs: number;
  clock?: () => number;
}

/** What one address did beyond its failures written in full, in a window. */
export interface AddressTally {
  address: string;
  /** Failures written in full. */
  written: number;
  /** Failures only counted (in the summary). */
  counted: number;
  /** Counted failures per reason. */
  reasons: Record<string, number>;
  /** The first few distinct names of the counted failures (login names, say), at most `sampleSize`. */
  names: string[];
  /** The first few distinct subjects (what the login was into), at most `sampleSize`. */
  subjects: string[];
}

/** The failures of a window that were only counted. */
export interface FailureSummary {
  windowStart: number;
  windowEnd: number;
  /** Every failure counted and not written in full, all addresses together. */
  counted: number;
  /** Addresses that had failures written in full in the window and counted ones beyond them. */
  addresses: AddressTally[];
  /** Failures of addresses that got none written in full (the node's limit was reached). */
  others: {
    counted: number;
    /** Distinct addresses among them, counted up to `maxOtherAddresses`. */
    addresses: number;
    reasons: Record<string, number>;
  };
}

/** One failure as the budget sees it. */
export interface Failure {
  address: string;
  reason: string;
  /** What was tried, kept as a small sample when counted (never secrets). */
  name: string;
  /** What the login was into (an auth method's id, say). */
  subject: string;
}

export const sampleSize = 3;
/** Longest name kept in a sample. */
export const maxSampleLength = 128;
export const maxOtherAddresses = 10_000;

interface Window {
  start: number;
  written: number;
  counted: number;
  /** Only addresses with a failure written in full: at most perNode of them. */
  tallies: Map<string, AddressTally>;
  others: FailureSummary["others"];
  otherAddresses: Set<string>;
}

export class FailureEventBudget {
  readonly options: Readonly<FailureBudgetOptions>;
  readonly #clock: () => number;
  #window: Window;

  constructor(options: FailureBudgetOptions) {
    this.options = options;
    this.#clock = options.clock ?? Date.now;
    this.#window = this.#fresh(this.#clock());
  }

  /**
   * Takes one failure: `full` when it is to be written in full (else it was counted), and the summary of the
   * window that ended before it, if that window counted any (handed out once).
   */
  admit(failure: Failure): { full: boolean; ended?: FailureSummary } {
    const ended = this.takeEnded();
    const w = this.#window;
    const tally = w.tallies.get(failure.address);
    const full = (tally?.written ?? 0) < this.options.perAddress && w.written < this.options.perNode;
    if (full) {
      w.written++;
      if (tally) tally.written++;
      else w.tallies.set(failure.address, emptyTally(failure.address));
    } else if (tally) {
      w.counted++;
      count(tally, failure);
    } else {
      w.counted++;
      w.others.counted++;
      w.others.reasons[failure.reason] = (w.others.reasons[failure.reason] ?? 0) + 1;
      if (w.otherAddresses.size < maxOtherAddresses) {
        w.otherAddresses.add(failure.address);
        w.others.addresses = w.otherAddresses.size;
      }
    }
    return ended ? { full, ended } : { full };
  }

  /** The summary of the window that ended (once), or undefined when none ended or it counted nothing. */
  takeEnded(): FailureSummary | undefined {
    const now = this.#clock();
    if (now < this.#window.start + this.options.windowMs) return undefined;
    return this.#close(now);
  }

  /** The summary of the current window, ending it now (at shutdown), or undefined when it counted nothing. */
  takeAll(): FailureSummary | undefined {
    return this.#close(this.#clock());
  }

  #close(now: number): FailureSummary | undefined {
    const w = this.#window;
    this.#window = this.#fresh(now);
    if (w.counted === 0) return undefined;
    return {
      windowStart: w.start,
      windowEnd: Math.min(now, w.start + this.options.windowMs),
      counted: w.counted,
      addresses: [...w.tallies.values()].filter((t) => t.counted > 0),
      others: w.others,
    };
  }

  #fresh(now: number): Window {
    const windowMs = this.options.windowMs;
    return {
      start: now - now % windowMs,
      written: 0,
      counted: 0,
      tallies: new Map(),
      others: { counted: 0, addresses: 0, reasons: {} },
      otherAddresses: new Set(),
    };
  }
}

function emptyTally(address: string): AddressTally {
  return { address, written: 1, counted: 0, reasons: {}, names: [], subjects: [] };
}

function count(tally: AddressTally, failure: Failure): void {
  tally.counted++;
  tally.reasons[failure.reason] = (tally.reasons[failure.reason] ?? 0) + 1;
  addSample(tally.names, failure.name.slice(0, maxSampleLength));
  addSample(tally.subjects, failure.subject.slice(0, maxSampleLength));
}

function addSample(sample: string[], value: string): void {
  if (sample.length < sampleSize && !sample.includes(value)) sample.push(value);
}
