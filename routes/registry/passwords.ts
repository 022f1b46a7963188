// Password hashing with argon2id; unknown logins verify a dummy hash so timing does not reveal them.

import { hash, verify } from "@node-rs/argon2";

let dummyHash: Promise<string> | undefined;

export function hashPassword(password: string): Promise<string> {
  return hash(password);
}

/** Verifies `password` against `stored`, or against a dummy hash when there is no user. */
export async function verifyPassword(password: string, stored: string | undefined): Promise<boolean> {
  const target = stored ?? await (dummyHash ??= hash("wharf-dummy-password"));
  try {
    const ok = await verify(target, password);
    return ok && stored !== undefined;
  } catch {
    return false;
  }
}
