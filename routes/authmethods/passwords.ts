// The auth-method family's argon2id parameters; the hashing and its bounded queue are lib/password_hashing.ts.

import type { Argon2Params } from "../../lib/password_hashing.ts";

/** Boundary's defaults: t=3, m=64 MiB, p=1, 32-byte salt and key. */
export const defaultArgon2: Argon2Params = { timeCost: 3, memoryKib: 64 * 1024, threads: 1 };
