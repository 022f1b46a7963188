// The registry's argon2id parameters and hasher; the hashing and its bounded queue are lib/password_hashing.ts.

import { type Argon2Params, type HashingQueue, PasswordHasher } from "../../../lib/password_hashing.ts";

/** What the registry's hashes have used from the start (t=2, m=19 MiB, p=1): stored hashes keep verifying. */
export const registryArgon2: Argon2Params = { timeCost: 2, memoryKib: 19_456, threads: 1 };

/** A registry password hasher over the node's shared hashing queue. */
export function registryHasher(queue: HashingQueue): PasswordHasher {
  return new PasswordHasher(registryArgon2, queue);
}
