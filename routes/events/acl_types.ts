// The contract between the ACL token layer (who is calling) and the policy layer (what they may do).

/** A compiled, merged view of a token's policies (or management / ACLs off). */
export interface Acl {
  /** Management tokens, and every caller when ACLs are disabled. */
  readonly management: boolean;
  /** Whether `capability` (e.g. "read-job", "list-jobs", "submit-job") is granted in namespace `ns`. */
  allowNamespace(ns: string, capability: string): boolean;
  /** namespace=*: a rule named exactly "*" grants `capability` and so does every other namespace rule. */
  allowAllNamespaces(capability: string): boolean;
  /** node policy read or write. */
  allowNodeRead(): boolean;
  /** node policy write. */
  allowNodeWrite(): boolean;
}

/** Who made a request to the Nomad-shaped family. */
export interface AclCaller {
  /** AccessorID of the token, "anonymous" for no token, "" when ACLs are disabled. */
  accessorId: string;
  acl: Acl;
  /** Policy names of the token, its own and its roles' (for non-management listing rules). */
  policies: readonly string[];
  /** IDs of the roles the token links to that still exist. */
  roleIds: readonly string[];
  /** Unix ms expiry, if the token expires. */
  expiresAt: number | undefined;
}
