// Two-factor authentication (§4): SMS codes (memory only, hashed, single-use) and TOTP (RFC 6238),
// the login check with its 406 answers and throttles, and the code-request endpoint.

import * as OTPAuth from "otpauth";
import { ApiError } from "../../lib/errors.ts";
import { json } from "../../lib/http.ts";
import { constantTimeEqual, sha256Hex } from "../../lib/crypto.ts";
import { smsFailureMessage } from "./errors.ts";
import type { UserDoc } from "./model.ts";
import type { SmsSender } from "./sms.ts";
import { FailureThrottle } from "../../lib/failure_throttle.ts";
import { rateLimited } from "./throttle.ts";

const TOTP_PURPOSE = "registry.totp";
const MINUTE = 60_000;

interface SmsCode {
  hash: string;
  expiresAt: number;
  failures: number;
}

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
  readonly #codes = new Map<string, SmsCode>();
  // Both are checked and counted without yielding in between: no attempt of theirs is ever in flight.
  readonly #wrong = new FailureThrottle({ user: { limit: 10, windowMs: 15 * MINUTE } });
  readonly #requests = new FailureThrottle({
    short: { limit: 1, windowMs: 30_000 },
    hour: { limit: 5, windowMs: 60 * MINUTE },
  });
  readonly #codeTtlMs: number;
  readonly sender: SmsSender;
  readonly #seal: (plain: string, aad: string) => string;
  readonly #open: (sealed: string, aad: string) => string;

  constructor(
    codeTtlMs: number,
    sender: SmsSender,
    keys: { seal(p: string, v: string, a: string): string; open(p: string, v: string, a: string): string },
  ) {
    this.#codeTtlMs = codeTtlMs;
    this.sender = sender;
    this.#seal = (plain, aad) => keys.seal(TOTP_PURPOSE, plain, aad);
    this.#open = (sealed, aad) => keys.open(TOTP_PURPOSE, sealed, aad);
  }

  sealSecret(userKey: string, base32: string): string {
    return this.#seal(base32, `registry/users/${userKey}`);
  }

  openSecret(userKey: string, sealed: string): string {
    return this.#open(sealed, `registry/users/${userKey}`);
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
   * (or undefined when an SMS code was used); throws 406 or 429 otherwise.
   */
  checkLoginCode(userKey: string, user: UserDoc, code: unknown): { totpStep?: number } {
    const details = { two_factor: twoFactorDetails(user) };
    if (code === undefined || code === null || code === "") {
      throw new ApiError(406, "Two-factor authentication code required!", { details });
    }
    const retry = this.#wrong.blockedSeconds({ user: userKey });
    if (retry > 0) throw rateLimited(retry);
    const text = typeof code === "number"
      ? String(code).padStart(6, "0")
      : typeof code === "string"
      ? code.trim()
      : "";
    const sms = this.#codes.get(userKey);
    if (sms && sms.expiresAt > Date.now() && constantTimeEqual(sms.hash, sha256Hex(text))) {
      this.#codes.delete(userKey);
      return {};
    }
    if (user.totp_secret) {
      const step = this.totpStep(userKey, user.totp_secret, text, user.totp_last_step);
      if (step !== undefined) return { totpStep: step };
    }
    if (sms) {
      sms.failures++;
      if (sms.failures >= 5 || sms.expiresAt <= Date.now()) this.#codes.delete(userKey);
    }
    this.#wrong.record({ user: userKey });
    throw new ApiError(406, "Invalid or expired two-factor code!", { details });
  }

  /** Sends a fresh SMS code (replacing any previous one); the caller has checked credentials. */
  async requestSmsCode(userKey: string, user: UserDoc): Promise<Response> {
    if (!user.two_factor_enabled || !user.mobile) {
      throw new ApiError(422, "Two-factor authentication by SMS is not enabled for this user");
    }
    const retry = this.#requests.blockedSeconds({ short: userKey, hour: userKey });
    if (retry > 0) throw rateLimited(retry);
    this.#requests.record({ short: userKey, hour: userKey });
    const code = randomDigits(6);
    this.#codes.set(userKey, { hash: sha256Hex(code), expiresAt: Date.now() + this.#codeTtlMs, failures: 0 });
    try {
      await this.sender.send({ to: user.mobile, code, created_at: new Date().toISOString() });
    } catch {
      this.#codes.delete(userKey);
      throw new ApiError(500, smsFailureMessage);
    }
    return json({ two_factor: { obfuscated_destination: `SMS number ending in ${user.mobile.slice(-4)}` } });
  }

  forget(userKey: string): void {
    this.#codes.delete(userKey);
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
