// Stored document types of the registry and the collection names they live in.

export const USERS = "registry/users";
export const ORGS = "registry/orgs";
export const TOKENS = "registry/tokens";
export const BOXES = "registry/boxes";
export const SETTINGS = "registry/settings";
/**
 * A user's SMS code in flight and the times codes were sent (one per user, by lowercase username): the code sealed,
 * so no node or disk holds it plain.
 */
export const SMS_CODES = "registry/sms_codes";

export interface SmsCodeDoc {
  [key: string]: unknown;
  /** The code, sealed with the root key (registry.sms, bound to the document's path); absent once it is gone. */
  sealed?: string;
  /** Epoch milliseconds. */
  expires_at?: number;
  /** Wrong codes given while this one was in flight: it goes at the fifth. */
  failures?: number;
  /**
   * Epoch milliseconds of the codes sent to the user within the last hour (the request limits, counted alike on
   * every node); they outlive the code. Absent in documents written before.
   */
  sent_at?: number[];
}

/**
 * The times of a user's wrong two-factor codes (one per user, by lowercase username): the limit of wrong codes,
 * counted alike on every node. A document of its own, which nodes of earlier releases never read nor rewrite.
 */
export const CODE_FAILURES = "registry/code_failures";

export interface CodeFailuresDoc {
  [key: string]: unknown;
  /** Epoch milliseconds of the wrong codes within the last 15 minutes, at most 10. */
  failed_at: number[];
}

/** A stored SMS document with a code in flight. */
export type SmsCodeInFlight = SmsCodeDoc & { sealed: string; expires_at: number; failures: number };

export interface UserDoc {
  [key: string]: unknown;
  username: string;
  email: string | null;
  password_hash: string;
  mobile: string | null;
  admin: boolean;
  two_factor_enabled: boolean;
  /** AES-GCM sealed base32 TOTP secret, active once confirmed. */
  totp_secret: string | null;
  /** Sealed secret awaiting confirmation. */
  totp_pending: string | null;
  /** Last accepted TOTP time step (no reuse). */
  totp_last_step: number;
  profile: string | null;
  delinquent: boolean;
  created_at: string;
  updated_at: string;
  /** The auth-method user this registry user is (docs/identity.md); absent or null: none. */
  identity?: UserIdentity | null;
}

/** A registry user's link to an auth-method user (Boundary `u_…`). */
export interface UserIdentity {
  user_id: string;
}

export interface OrgMember {
  username: string;
  role: "owner" | "member";
}

export interface OrgDoc {
  [key: string]: unknown;
  name: string;
  profile: string | null;
  delinquent: boolean;
  members: OrgMember[];
  /** Managed groups bound to the organization's roles (docs/identity.md#group-bindings). */
  group_bindings?: { managed_group_id: string; role: "owner" | "member" }[];
  created_at: string;
  updated_at: string;
}

export interface TokenDoc {
  [key: string]: unknown;
  token_hash: string;
  username: string;
  description: string;
  created_at: string;
  expires_at: string | null;
}

export interface HostedFile {
  sha256: string;
  size: number;
  /** Digests known for the file (sha256, the checksum type at upload, any computed later). */
  digests: Record<string, string>;
  uploaded_at: string;
}

export interface ProviderDoc {
  name: string;
  url: string | null;
  checksum: string | null;
  checksum_type: string | null;
  /** The hosted file: content address and size, or null. */
  blob: HostedFile | null;
  architecture: string;
  default_architecture: boolean;
  created_at: string;
  updated_at: string;
}

export type VersionStatus = "unreleased" | "active" | "revoked";

export interface VersionDoc {
  version: string;
  status: VersionStatus;
  description: string | null;
  providers: ProviderDoc[];
  created_at: string;
  updated_at: string;
}

export interface BoxDoc {
  [key: string]: unknown;
  /** Lowercase namespace key (the owner's stored id). */
  owner: string;
  name: string;
  short_description: string | null;
  description: string | null;
  private: boolean;
  versions: VersionDoc[];
  created_at: string;
  updated_at: string;
  /** Downloads counted before this registry (set by an admin, e.g. by an import): added to the count here. */
  downloads_imported?: number;
}

/** A user document with no second factor, mobile or profile, not delinquent, created (and updated) at `at`. */
export function plainUserDoc(
  fields: Pick<UserDoc, "username" | "email" | "password_hash" | "admin"> & Partial<UserDoc>,
  at: string,
): UserDoc {
  return {
    mobile: null,
    two_factor_enabled: false,
    totp_secret: null,
    totp_pending: null,
    totp_last_step: 0,
    profile: null,
    delinquent: false,
    created_at: at,
    updated_at: at,
    ...fields,
  };
}

export function now(): string {
  return new Date().toISOString();
}

/** A provider can be downloaded: it has an external url or a completed upload. */
export function providerIsValid(p: ProviderDoc): boolean {
  return p.url !== null || p.blob !== null;
}
