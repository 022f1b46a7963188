// The identity provider the registry signs people in through (docs/identity.md): what the auth-method family
// offers the registry, typed here so neither family imports the other (app.ts hands one to the other).

/** The auth-method types a registry sign-in method can have. */
export type SignInMethodType = "password" | "ldap" | "oidc";

/** An auth method as the registry's sign-in settings see it. */
export interface IdentityMethod {
  id: string;
  type: string;
  name: string | undefined;
  scopeId: string;
  /** The scope's type: only global and org scopes hold sign-in methods. */
  scopeType: string | undefined;
  /** The method's state (ldap and oidc: inactive, active-private, active-public; password: active-public). */
  state: string;
}

/** A first factor that passed: the auth-method account and user, with what provisioning reads. */
export interface VerifiedIdentity {
  methodId: string;
  methodType: SignInMethodType;
  userId: string;
  accountId: string;
  /** The account's login name (password, ldap). */
  loginName: string | undefined;
  /** The OIDC `preferred_username` claim, as the method's maps stored it. */
  preferredUsername: string | undefined;
  email: string | undefined;
  /** False when the OIDC claims said `email_verified: false` (provisioning then leaves the e-mail empty). */
  emailVerified: boolean | undefined;
}

/** The auth methods' first start, as this node made it: the registry announces the one administrator. */
export interface IdentityFirstStart {
  methodId: string;
  /** The password when it was generated (none was configured): to be printed once. */
  generatedPassword: string | undefined;
  /** The auth methods' own line for that password, for when the registry has its admin already. */
  announcement: string | undefined;
}

/** A console OIDC sign-in's attempt, as collected after the provider's callback. */
export type OidcSignInOutcome =
  | { status: "pending" }
  | { status: "failed" }
  | { status: "ready"; identity: VerifiedIdentity };

/** A managed group as the registry's group bindings see it. */
export interface ManagedGroupInfo {
  id: string;
  type: string;
  authMethodId: string;
  name: string | undefined;
}

/** What the registry may ask of the auth methods. */
export interface IdentityProvider {
  method(id: string): IdentityMethod | undefined;
  /** The auth-method user `userId`: whether it exists, and the methods its accounts belong to. */
  user(userId: string): { id: string; accountMethodIds: string[] } | undefined;
  /**
   * Whether account `accountId` still exists and belongs to auth-method user `userId` (the check a console OIDC
   * attempt's collection makes, for the code step after it to repeat).
   */
  holdsAccount(userId: string, accountId: string): boolean;
  /**
   * Checks a login name and password against one password or ldap method through that method's own login
   * (account created or refreshed, attribute maps, events), minting no auth token. Throttling is the caller's:
   * a wrong password is `undefined`, never an error.
   */
  /** The managed groups the accounts of auth-method user `userId` are members of (as their last login decided). */
  managedGroupsOf(userId: string): readonly string[];
  /** A managed group, when it exists. */
  managedGroup(id: string): ManagedGroupInfo | undefined;
  /**
   * The auth-method users whose accounts are members of managed group `id` (its `member_ids`, as their last
   * login decided), each once, sorted; none when the group is gone. Costs the group's members, no more.
   */
  managedGroupMembers(id: string): readonly string[];
  /** Up to `limit` managed groups, by id (what a binding form offers). */
  managedGroups(limit: number): ManagedGroupInfo[];
  /** Calls `removed` with the id of every managed group deleted from now on; returns the unsubscribe. */
  watchManagedGroupRemovals(removed: (id: string) => void): () => void;
  /** The auth methods' first administrator: account `admin` of the global primary method, a password method. */
  initialAdmin(): { userId: string; methodId: string } | undefined;
  /** What this start created, handed over once (undefined after, and when nothing was created). */
  takeFirstStart(): IdentityFirstStart | undefined;
  /**
   * Starts the oidc method's login (its state, nonce and PKCE rules unchanged) whose callback ends at
   * `completePath` (under the method's api_url_prefix): the provider's URL and the attempt's token id. The
   * browser that started it keeps the token id as the last `.`-separated part of cookie `bindingCookie`; the
   * callback completes the attempt only in that browser (another's, sent the provider's URL, fails it).
   */
  startOidc(
    methodId: string,
    clientIp: string,
    completePath: string,
    bindingCookie: string,
  ): Promise<{ authUrl: string; tokenId: string }>;
  /**
   * Collects a started attempt once: its login committed the account (attribute maps, managed-group
   * memberships) but minted no auth token; the registry signs the person in instead.
   */
  collectOidc(methodId: string, tokenId: string): Promise<OidcSignInOutcome | undefined>;
  verifyPassword(
    methodId: string,
    loginName: string,
    password: string,
    clientIp: string,
  ): Promise<VerifiedIdentity | undefined>;
}
