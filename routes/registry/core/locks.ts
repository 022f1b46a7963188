// The registry's lock keys: one global key every write takes, exclusively or shared, and finer keys (a namespace,
// an upload session, a token) that scoped writes take exclusively. Cluster-wide on PostgreSQL.

/**
 * The rule. A write that reads or changes more than one namespace (user/org creation, deletion, membership,
 * settings, maintenance, admin user changes, bootstrap, the upload sweep) takes `registry/write` exclusively:
 * it runs alone, as every registry write did before. A write confined to one namespace takes `registry/write`
 * shared plus, exclusively, the key of every namespace (and upload session, token) its plan reads or decides on:
 * scoped writes on different keys run (and commit) together; the global ones still exclude them all.
 * Namespace existence and display names, org membership and delinquency change only under the global key.
 */
export const registryLock = {
  global: "registry/write",
  /** A user's or an organization's namespace (one name space for both): its boxes, tokens, 2FA, principals. */
  namespace: (key: string) => `registry/ns/${key.toLowerCase()}`,
  /** One upload session (by its document id): consumed once. */
  upload: (hash: string) => `registry/upload/${hash}`,
  /** One token document (by its hash). */
  token: (hash: string) => `registry/token/${hash}`,
};

/** The store's lock sets of a registry write: global (`undefined`) or scoped to `keys` (at least one). */
export function registryLockSet(keys?: readonly string[]): { locks: string[]; sharedLocks: string[] } {
  if (keys === undefined) return { locks: [registryLock.global], sharedLocks: [] };
  if (keys.length === 0 || keys.includes(registryLock.global)) {
    throw new Error("a scoped registry write names at least one key, never the global one");
  }
  return { locks: [...keys], sharedLocks: [registryLock.global] };
}
