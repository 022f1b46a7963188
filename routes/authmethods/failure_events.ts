// The auth family's failed-login events, bounded (lib/failure_event_budget.ts): the first failures of an address
// in a window are `AuthenticationFailed` events as before, the rest are counted into one
// `AuthenticationFailuresSummarized` event when the window ends (written by a timer, or by the next failure).

import type { Logger } from "../../lib/log.ts";
import { envDurationMs, envInt } from "../../lib/config.ts";
import {
  type FailureBudgetOptions,
  FailureEventBudget,
  type FailureSummary,
} from "../../lib/failure_event_budget.ts";
import type { DocumentStore, EventInput } from "../../lib/store/mod.ts";

export function readFailureEventSettings(env: Readonly<Record<string, string>>): FailureBudgetOptions {
  return {
    perAddress: envInt(env, "WHARF_FAILED_LOGIN_EVENTS_PER_ADDRESS", 5, 1),
    perNode: envInt(env, "WHARF_FAILED_LOGIN_EVENTS_PER_NODE", 20, 1),
    windowMs: Math.max(1000, envDurationMs(env, "WHARF_FAILED_LOGIN_EVENTS_WINDOW", 60_000)),
  };
}

export interface LoginFailure {
  methodId: string;
  loginName: string;
  reason: string;
  clientIp: string;
}

export class FailureEvents {
  readonly #store: DocumentStore;
  readonly #logger: Logger;
  readonly #budget: FailureEventBudget;
  readonly #timer: ReturnType<typeof setInterval>;

  constructor(store: DocumentStore, logger: Logger, options: FailureBudgetOptions) {
    this.#store = store;
    this.#logger = logger;
    this.#budget = new FailureEventBudget(options);
    // A window's summary goes out soon after it ends, even when no failure follows.
    const tick = Math.min(15_000, Math.max(250, Math.floor(options.windowMs / 4)));
    this.#timer = setInterval(() => this.#writeSummary(this.#budget.takeEnded()), tick);
    Deno.unrefTimer(this.#timer as unknown as number);
  }

  /** Records one failed or throttled login: in full while the budget allows, else counted for the summary. */
  async record(failure: LoginFailure): Promise<void> {
    const { full, ended } = this.#budget.admit({
      address: failure.clientIp,
      reason: failure.reason,
      name: failure.loginName,
      subject: failure.methodId,
    });
    const events = ended ? [summaryEvent(ended)] : [];
    if (full) events.push(failureEvent(failure));
    if (events.length) await this.#store.transact([], () => ({ events }));
  }

  /** Stops the timer and writes what the current window counted (at shutdown, before the store closes). */
  async close(): Promise<void> {
    clearInterval(this.#timer);
    await this.#write(this.#budget.takeAll());
  }

  /** Stops the timer only (the store is not usable). */
  stop(): void {
    clearInterval(this.#timer);
  }

  #writeSummary(summary: FailureSummary | undefined): void {
    this.#write(summary).catch((err) =>
      this.#logger.warn("failed-login summary not written", { error: String(err) })
    );
  }

  async #write(summary: FailureSummary | undefined): Promise<void> {
    if (summary) await this.#store.transact([], () => ({ events: [summaryEvent(summary)] }));
  }
}

export function failureEvent(f: LoginFailure): EventInput {
  return {
    Topic: "AuthToken",
    Type: "AuthenticationFailed",
    Key: f.methodId,
    Payload: {
      AuthToken: {
        auth_method_id: f.methodId,
        login_name: f.loginName,
        reason: f.reason,
        client_ip: f.clientIp,
      },
    },
  };
}

export function summaryEvent(s: FailureSummary): EventInput {
  const windowStart = new Date(s.windowStart).toISOString();
  return {
    Topic: "AuthToken",
    Type: "AuthenticationFailuresSummarized",
    Key: windowStart,
    Payload: {
      AuthToken: {
        window_start: windowStart,
        window_end: new Date(s.windowEnd).toISOString(),
        count: s.counted,
        addresses: s.addresses.map((a) => ({
          client_ip: a.address,
          count: a.counted,
          reasons: a.reasons,
          auth_method_ids: a.subjects,
          login_names: a.names,
        })),
        other_addresses: {
          count: s.others.counted,
          addresses: s.others.addresses,
          reasons: s.others.reasons,
        },
      },
    },
  };
}
