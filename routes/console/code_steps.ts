// The two-factor code steps waiting for their code (docs/identity.md#oidc-sign-in), stored so that each is
// used once on any node of a cluster: per registry user one document with the HMACs of at most 5 steps' random
// ids and their expiry; a step is used up when its sign-in completes, and expired ones are swept.

import { randomSecret } from "../../lib/ids.ts";
import type { DocumentStore, DocWrite, StoredDoc } from "../../lib/store/mod.ts";
import type { SessionKeys } from "./session.ts";

/** Stored with the registry, as the console's sessions. */
export const CODE_STEPS = "registry/console_code_steps";
/** Steps one user may have waiting: a new one past it replaces that user's oldest (docs/security.md). */
export const MAX_CODE_STEPS_PER_USER = 5;
const HMAC_PURPOSE = "console.code-step";
/** Users' documents pruned per commit by the sweep. */
const sweepBatch = 100;

interface WaitingStep {
  /** HMAC of the step's id (the id itself is only in the browser's sealed cookie). */
  id: string;
  /** Milliseconds since the epoch. */
  expires_at: number;
}

interface CodeStepsDoc {
  [key: string]: unknown;
  /** Oldest first. */
  steps: WaitingStep[];
}

export class CodeSteps {
  readonly #store: DocumentStore;
  readonly #keys: Pick<SessionKeys, "hmac">;

  constructor(store: DocumentStore, keys: Pick<SessionKeys, "hmac">) {
    this.#store = store;
    this.#keys = keys;
  }

  /**
   * A new waiting step of user `userKey`, valid `ttlMs` (durable before this resolves): its random id, for the
   * browser's sealed cookie. The user's oldest steps beyond MAX_CODE_STEPS_PER_USER go.
   */
  async open(userKey: string, ttlMs: number): Promise<string> {
    const id = randomSecret(32);
    const added: WaitingStep = { id: this.#hmac(id), expires_at: Date.now() + ttlMs };
    await this.#store.transact([lockOf(userKey)], () => {
      const kept = this.#waiting(this.#store.get<CodeStepsDoc>(CODE_STEPS, userKey), Date.now());
      const steps = [...kept.slice(Math.max(0, kept.length + 1 - MAX_CODE_STEPS_PER_USER)), added];
      return { writes: [{ collection: CODE_STEPS, id: userKey, doc: { steps } }] };
    });
    return id;
  }

  /** Whether step `id` of user `userKey` waits: opened, not expired, not used. */
  waits(userKey: string, id: string): boolean {
    const hmac = this.#hmac(id);
    return this.#waiting(this.#store.get<CodeStepsDoc>(CODE_STEPS, userKey), Date.now()).some((s) =>
      s.id === hmac
    );
  }

  /** Uses up step `id` of user `userKey`: true once (whichever node is asked), false when it does not wait. */
  async use(userKey: string, id: string): Promise<boolean> {
    const hmac = this.#hmac(id);
    const { result } = await this.#store.transact([lockOf(userKey)], () => {
      const stored = this.#store.get<CodeStepsDoc>(CODE_STEPS, userKey);
      const waiting = this.#waiting(stored, Date.now());
      const rest = waiting.filter((s) => s.id !== hmac);
      if (!stored || rest.length === waiting.length) return { writes: [], result: false };
      const doc = rest.length ? { steps: rest } : null;
      return {
        writes: [{ collection: CODE_STEPS, id: userKey, doc, ifVersion: stored.version }],
        result: true,
      };
    });
    return result;
  }

  /** Deletes expired steps (every few minutes on every node, with the sessions' sweep). */
  async sweep(now = Date.now()): Promise<void> {
    const stale = [...this.#store.list<CodeStepsDoc>(CODE_STEPS)]
      .filter((d) => this.#waiting(d, now).length !== d.doc.steps.length)
      .map((d) => d.id);
    for (let i = 0; i < stale.length; i += sweepBatch) {
      const users = stale.slice(i, i + sweepBatch);
      await this.#store.transact(users.map(lockOf), () => {
        const writes: DocWrite[] = [];
        for (const userKey of users) {
          const stored = this.#store.get<CodeStepsDoc>(CODE_STEPS, userKey);
          if (!stored) continue;
          const steps = this.#waiting(stored, now);
          if (steps.length === stored.doc.steps.length) continue;
          writes.push({ collection: CODE_STEPS, id: userKey, doc: steps.length ? { steps } : null });
        }
        return { writes };
      });
    }
  }

  #waiting(stored: StoredDoc<CodeStepsDoc> | undefined, now: number): WaitingStep[] {
    const steps = Array.isArray(stored?.doc.steps) ? stored.doc.steps : [];
    return steps.filter((s) => s.expires_at > now);
  }

  #hmac(id: string): string {
    return this.#keys.hmac(HMAC_PURPOSE, id);
  }
}

function lockOf(userKey: string): string {
  return `${CODE_STEPS}/${userKey}`;
}
