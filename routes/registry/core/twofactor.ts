// Two-factor authentication (docs/security.md#changing-the-second-factor): SMS codes (stored sealed, one per
// user, single-use on any node of a cluster, their request limits counted in the same document) and TOTP
// (RFC 6238), the code checks with their 406 answers and the limit of wrong codes (stored, across the nodes),
// and the code-request endpoint.

import * as OTPAuth from "otpauth";
import { ApiError } from "../../../lib/errors.ts";
import { constantTimeEqual } from "../../../lib/crypto.ts";
import { smsFailureMessage } from "./errors.ts";
import {
  CODE_FAILURES,
  type CodeFailuresDoc,
  SMS_CODES,
  type SmsCodeDoc,
  type SmsCodeInFlight,
  type UserDoc,
} from "./model.ts";
import { hasCode, recentSends, sendWaitMs, withoutCode } from "./sms_sends.ts";
import {
  codeCheckWaitMs,
  recentFailures,
  withFailure,
  WRONG_CODES_LIMIT,
  WRONG_CODES_WINDOW_MS,
} from "./code_failures.ts";
import type { CommitPlan, DocWrite, StoredDoc } from "../../../lib/store/mod.ts";
import type { RegistryState } from "./state.ts";
import { registryLock } from "./locks.ts";
import type { SmsSender } from "./sms.ts";
import { type Attempt, FailureLimitReached, FailureThrottle } from "../../../lib/failure_throttle.ts";
import { rateLimited } from "./throttle.ts";

const TOTP_PURPOSE = "registry.totp";
const SMS_PURPOSE = "registry.sms";

export function deliveryMethods(user: UserDoc): ("app" | "sms")[] {
  const out: ("app" | "sms")[] = [];
  if (user.totp_secret) out.push("app");
  if (user.mobile) out.push("sms");
  return out;
}

export function twoFactorDetails(user: UserDoc) {
  const methods = deliveryMethods(user);
  return { default_delivery_method: methods.includes("app") ? "app" : "sms", delivery_methods: methods };
}

export class TwoFactor {
  // Wrong codes: counted in the user's stored CODE_FAILURES document (code_failures.ts), across the cluster; this
  // node's throttle of the same limit holds a slot per check while it runs, so at most that many wait for the
  // user's lock at once. Code requests: counted in the stored SMS document (sms_sends.ts), across the cluster.
  readonly #wrong = new FailureThrottle({
    user: { limit: WRONG_CODES_LIMIT, windowMs: WRONG_CODES_WINDOW_MS },
  });
  readonly #codeTtlMs: number;
  readonly #smsIntervalMs: number;
  readonly sender: SmsSender;
  readonly #reg: RegistryState;
  readonly #keys: {
    seal(p: string, v: string, a: string): string;
    open(p: string, v: string, a: string): string;
  };

  constructor(
    reg: RegistryState,
    timing: { codeTtlMs: number; smsIntervalMs: number },
    sender: SmsSender,
    keys: { seal(p: string, v: string, a: string): string; open(p: string, v: string, a: string): string },
  ) {
    this.#reg = reg;
    this.#codeTtlMs = timing.codeTtlMs;
    this.#smsIntervalMs = timing.smsIntervalMs;
    this.sender = sender;
    this.#keys = keys;
  }

  sealSecret(userKey: string, base32: string): string {
    return this.#keys.seal(TOTP_PURPOSE, base32, `registry/users/${userKey}`);
  }

  openSecret(userKey: string, sealed: string): string {
    return this.#keys.open(TOTP_PURPOSE, sealed, `registry/users/${userKey}`);
  }

  /** The accepted time step of `code` for a sealed secret, if valid and newer than `lastStep`. */
  totpStep(userKey: string, sealed: string, code: string, lastStep: number): number | undefined {
    if (!/^[0-9]{6}$/.test(code)) return undefined;
    const secret = OTPAuth.Secret.fromBase32(this.openSecret(userKey, sealed));
    const now = Date.now();
    const current = Math.floor(now / 30_000);
    for (const delta of [-1, 0, 1]) {
      const step = current + delta;
      if (step <= lastStep) continue;
      const expected = OTPAuth.TOTP.generate({
        secret,
        algorithm: "SHA1",
        digits: 6,
        period: 30,
        timestamp: step * 30_000,
      });
      if (constantTimeEqual(expected, code)) return step;
    }
    return undefined;
  }

  /**
   * Checks the login's two-factor code for a user with two-factor on. Returns the TOTP step to record
   * (or undefined when an SMS code was used: it is gone on every node); throws 406 or 429 otherwise.
   */
  async checkLoginCode(userKey: string, user: UserDoc, code: unknown): Promise<{ totpStep?: number }> {
    const details = { two_factor: twoFactorDetails(user) };
    if (code === undefined || code === null || code === "") {
      throw new ApiError(406, "Two-factor authentication code required!", { details });
    }
    const text = typeof code === "number"
      ? String(code).padStart(6, "0")
      : typeof code === "string"
      ? code.trim()
      : "";
    const outcome = await this.#judge<{ totpStep?: number }>(userKey, text, {}, () => {
      if (!user.totp_secret) return undefined;
      const step = this.totpStep(userKey, user.totp_secret, text, user.totp_last_step);
      return step === undefined ? undefined : { totpStep: step };
    });
    if (!outcome) throw new ApiError(406, "Invalid or expired two-factor code!", { details });
    return outcome;
  }

  /**
   * Whether `code` is a current code of the user's active second factor (what changing it needs besides a
   * session): the SMS code in flight (then used up) or a code of the authenticator app. Wrong codes count
   * against the same per-user limit as the login's (429 once it is reached); a missing code counts nothing.
   */
  async checkCurrentCode(userKey: string, user: UserDoc, code: string): Promise<boolean> {
    const text = code.trim();
    if (text === "") return false;
    const sms = user.two_factor_enabled && user.mobile ? true : undefined;
    const ok = await this.#judge(userKey, text, sms, () => {
      if (!user.totp_secret) return undefined;
      return this.totpStep(userKey, user.totp_secret, text, 0) === undefined ? undefined : true;
    });
    return ok === true;
  }

  /**
   * Judges `text`, a code of the user's, against the limit of wrong codes counted on every node (429 once it is
   * reached; checked from this node's view first, which commits nothing). Then one commit under the user's lock,
   * after this node caught up with the other nodes' commits: with fewer than the limit of wrong codes in the
   * window, the SMS code in flight when `text` is it and `sms` is given (it is used up; `sms` is the answer), else
   * `otherwise()` (the authenticator app's check, no write), else a wrong code (undefined): its time is written,
   * and it counts on the SMS code in flight, in that same commit. So the code checks of a user, on all nodes, are
   * taken one at a time, and no more than the limit of wrong ones get an answer other than 429. This node's
   * in-memory throttle (the same limit) lets at most that many of them wait for the lock at once.
   */
  async #judge<T>(
    userKey: string,
    text: string,
    sms: T | undefined,
    otherwise: () => T | undefined,
  ): Promise<T | undefined> {
    this.#refuseWhileBlocked(this.#storedFailures(userKey)?.doc, Date.now());
    const attempt = await this.#attempt(userKey);
    const plan = (): CommitPlan<T | undefined> => {
      const now = Date.now();
      const failures = this.#storedFailures(userKey);
      this.#refuseWhileBlocked(failures?.doc, now);
      // Deleted meanwhile (on any node): no code of theirs is right, and nothing is kept for them.
      if (!this.#reg.user(userKey)) return { result: undefined };
      const stored = this.#storedCode(userKey);
      if (sms !== undefined && stored && this.#matches(userKey, stored, text)) {
        const doc = withoutCode(stored.doc, now);
        return {
          writes: [{ collection: SMS_CODES, id: userKey, doc, ifVersion: stored.version }],
          result: sms,
        };
      }
      const right = otherwise();
      // A right app code writes nothing: the store commits no batch for it.
      if (right !== undefined) return { result: right };
      const failure: DocWrite = {
        collection: CODE_FAILURES,
        id: userKey,
        doc: withFailure(failures?.doc, now),
        ifVersion: failures?.version ?? 0,
      };
      return { writes: [failure, ...this.#wrongSmsCode(stored, now)], result: undefined };
    };
    const judged = () => this.#reg.writeIn([registryLock.namespace(userKey)], plan);
    return await attempt.run(judged, (outcome) => outcome !== undefined);
  }

  /** This node's slot for a code check of the user's (429 once this node saw the limit of wrong codes). */
  async #attempt(userKey: string): Promise<Attempt<"user">> {
    try {
      return await this.#wrong.begin({ user: userKey });
    } catch (err) {
      if (err instanceof FailureLimitReached) throw rateLimited(err.retryAfter);
      throw err;
    }
  }

  /** 429 while the stored wrong-code times allow no code check at `now`. */
  #refuseWhileBlocked(doc: CodeFailuresDoc | undefined, now: number): void {
    const waitMs = codeCheckWaitMs(recentFailures(doc, now), now);
    if (waitMs > 0) throw rateLimited(Math.max(1, Math.ceil(waitMs / 1000)));
  }

  /**
   * A wrong code while an SMS code is in flight: counted on it, which goes at the fifth or once expired (the
   * send times stay). The write, if any.
   */
  #wrongSmsCode(stored: StoredDoc<SmsCodeDoc> | undefined, now: number): DocWrite[] {
    if (!stored || !hasCode(stored.doc)) return [];
    const failures = stored.doc.failures + 1;
    const doc = failures >= 5 || stored.doc.expires_at <= now
      ? withoutCode(stored.doc, now)
      : { ...stored.doc, failures };
    return [{ collection: SMS_CODES, id: stored.id, doc, ifVersion: stored.version }];
  }

  /**
   * Sends a fresh SMS code (replacing any previous one); the caller has checked credentials. 429 while the
   * user's request limits hold, counted on every node: the check and the new code's send time are one commit,
   * under the user's lock, after this node caught up with the other nodes' commits. The masked destination:
   * "SMS number ending in …".
   */
  async requestSmsCode(userKey: string, user: UserDoc): Promise<string> {
    if (!user.two_factor_enabled || !user.mobile) {
      throw new ApiError(422, "Two-factor authentication by SMS is not enabled for this user");
    }
    // Refused from this node's view first: a refused request commits nothing.
    this.#refuseEarlySend(this.#storedCode(userKey)?.doc, Date.now());
    const code = randomDigits(6);
    const sealed = this.#keys.seal(SMS_PURPOSE, code, `${SMS_CODES}/${userKey}`);
    await this.#writeCode(userKey, (current) => {
      const now = Date.now();
      this.#refuseEarlySend(current, now);
      const doc: SmsCodeInFlight = {
        sealed,
        expires_at: now + this.#codeTtlMs,
        failures: 0,
        sent_at: [...recentSends(current, now), now],
      };
      return doc;
    });
    try {
      await this.sender.send({ to: user.mobile, code, created_at: new Date().toISOString() });
    } catch {
      // The code goes (if it is still this one); its send stays counted.
      const voided = (current: SmsCodeDoc | undefined) =>
        current?.sealed === sealed ? withoutCode(current, Date.now()) : undefined;
      await this.#writeCode(userKey, voided).catch(() => {});
      throw new ApiError(500, smsFailureMessage);
    }
    return `SMS number ending in ${user.mobile.slice(-4)}`;
  }

  /** 429 while the document's send times allow no new code at `now`. */
  #refuseEarlySend(doc: SmsCodeDoc | undefined, now: number): void {
    const waitMs = sendWaitMs(recentSends(doc, now), now, this.#smsIntervalMs);
    if (waitMs > 0) throw rateLimited(Math.max(1, Math.ceil(waitMs / 1000)));
  }

  /**
   * Replaces the user's stored SMS document with what `next` makes of it (null deletes, undefined leaves it; a
   * throw writes nothing), under the user's lock and against the version `next` saw.
   */
  async #writeCode(
    userKey: string,
    next: (current: SmsCodeDoc | undefined) => SmsCodeDoc | null | undefined,
  ): Promise<void> {
    await this.#reg.writeIn([registryLock.namespace(userKey)], () => {
      const current = this.#storedCode(userKey);
      const doc = next(current?.doc);
      if (doc === undefined || (doc === null && !current)) return { writes: [] };
      return { writes: [{ collection: SMS_CODES, id: userKey, doc, ifVersion: current?.version ?? 0 }] };
    });
  }

  #storedFailures(userKey: string): StoredDoc<CodeFailuresDoc> | undefined {
    return this.#reg.store.get<CodeFailuresDoc>(CODE_FAILURES, userKey);
  }

  #storedCode(userKey: string): StoredDoc<SmsCodeDoc> | undefined {
    return this.#reg.store.get<SmsCodeDoc>(SMS_CODES, userKey);
  }

  #matches(userKey: string, stored: StoredDoc<SmsCodeDoc> | undefined, text: string): boolean {
    if (!stored || !hasCode(stored.doc) || stored.doc.expires_at <= Date.now()) return false;
    const code = this.#keys.open(SMS_PURPOSE, stored.doc.sealed, `${SMS_CODES}/${userKey}`);
    return constantTimeEqual(code, text);
  }
}

/** Uniform random decimal digits (rejection sampling, no modulo bias). */
function randomDigits(n: number): string {
  let out = "";
  while (out.length < n) {
    for (const b of crypto.getRandomValues(new Uint8Array(n * 2))) {
      if (b < 250 && out.length < n) out += String(b % 10);
    }
  }
  return out;
}

export function newTotpSecret(): string {
  return new OTPAuth.Secret({ size: 20 }).base32;
}

export function otpauthUrl(issuer: string, username: string, base32: string): string {
  const label = `${encodeURIComponent(issuer)}:${encodeURIComponent(username)}`;
  return `otpauth://totp/${label}?secret=${base32}&issuer=${
    encodeURIComponent(issuer)
  }&algorithm=SHA1&digits=6&period=30`;
}
