// The registry's in-memory view over the document store: lookups by name, boxes by owner, blob
// reference counts, usage counters, and the write path (one commit per operation, global or scoped locks).

import type { AppContext } from "../../../lib/app.ts";
import type { IdentityProvider } from "../../../lib/identity.ts";
import type { CommitPlan, Counters, StoredDoc } from "../../../lib/store/mod.ts";
import { VersionConflictError } from "../../../lib/store/mod.ts";
import { ApiError } from "../../../lib/errors.ts";
import { type BoxDoc, BOXES, type OrgDoc, ORGS, SETTINGS, type UserDoc, USERS } from "./model.ts";
import type { RegistrySettings } from "./settings.ts";
import { LoginThrottle } from "./throttle.ts";
import type { PasswordHasher } from "../../../lib/password_hashing.ts";
import { registryHasher } from "./passwords.ts";
import { fillArchitectureDefaults } from "./architectures.ts";
import { registryLockSet } from "./locks.ts";
import { RegistryMetrics } from "./metrics.ts";
import { LinkedUsers } from "./linked_users.ts";

/** The registry's documents and indexes, without its collaborators (core/registry.ts adds those). */
export class RegistryState {
  readonly ctx: AppContext;
  readonly settings: RegistrySettings;
  /** Registry passwords, hashed and verified in the node's bounded hashing queue. */
  readonly passwords: PasswordHasher;
  readonly downloads: Counters;
  readonly tokenUse: Counters;
  /** Downloads, uploads and the registry's sizes for /v1/metrics (core/metrics.ts). */
  readonly metrics: RegistryMetrics;
  /** owner key → lowercase box name → box id. */
  readonly #boxesByOwner = new Map<string, Map<string, string>>();
  /** sha256 → number of providers pointing at it. */
  readonly #blobRefs = new Map<string, number>();
  /** Blobs held by uploads not yet committed (staged direct uploads, ingests awaiting their commit). */
  readonly pendingBlobs = new Map<string, number>();
  /** The registry user each auth-method user is linked to (docs/identity.md), kept by the change feed. */
  readonly linkedUsers: LinkedUsers;
  /** Failed credential checks per lowercase login and per client IP (15 min windows). */
  readonly loginThrottle: LoginThrottle;
  /**
   * The auth methods the registry signs people in through and takes managed groups from (docs/identity.md);
   * none: registry passwords only. Set once by core/registry.ts at construction.
   */
  identity: IdentityProvider | undefined = undefined;
  /** Grows with every box change (and namespace renames never happen): search caches key on it. */
  boxGeneration = 0;
  /** Grows with every counted download (search's by-downloads order). */
  downloadGeneration = 0;

  /** The box's download count: counted here plus what was imported from another registry. */
  boxDownloads(box: StoredDoc<BoxDoc>): number {
    return this.downloads.get(box.id) + (box.doc.downloads_imported ?? 0);
  }

  countDownload(boxId: string): void {
    this.metrics.downloadCounted();
    this.downloads.add(boxId);
    this.downloadGeneration++;
  }
  #collecting: Promise<void> | undefined;
  /** Blobs that lost their last reference or hold since the last collection: looked at by name, not by a scan. */
  readonly #orphanCandidates = new Set<string>();
  #fullScanDue = false;
  #collectAgain = false;
  /** Referenced by a provider or held by an upload, asked at the moment of each removal. */
  readonly #blobInUse = {
    has: (sha256: string) => this.#blobRefs.has(sha256) || this.pendingBlobs.has(sha256),
  };
  #unwatch: () => void;

  constructor(
    ctx: AppContext,
    settings: RegistrySettings,
    counters: { downloads: Counters; tokenUse: Counters },
  ) {
    this.ctx = ctx;
    this.settings = settings;
    this.loginThrottle = new LoginThrottle(settings.loginFailures);
    this.passwords = registryHasher(ctx.passwordHashing);
    this.passwords.warmUp();
    this.downloads = counters.downloads;
    this.tokenUse = counters.tokenUse;
    this.metrics = new RegistryMetrics(ctx.metrics, () => this.allBoxes());
    for (const b of ctx.data.store.list<BoxDoc>(BOXES)) {
      fillArchitectureDefaults(b.doc);
      this.#index(b, +1);
    }
    this.#unwatch = ctx.data.store.watch(BOXES, (change) => {
      this.boxGeneration++;
      if (change.previous) this.#index(change.previous as StoredDoc<BoxDoc>, -1);
      if (change.current) this.#index(change.current as StoredDoc<BoxDoc>, +1);
    });
    this.linkedUsers = new LinkedUsers(ctx.data.store);
  }

  close(): void {
    this.#unwatch();
    this.linkedUsers.close();
  }

  get store() {
    return this.ctx.data.store;
  }

  #index(box: StoredDoc<BoxDoc>, delta: 1 | -1): void {
    const d = box.doc;
    let names = this.#boxesByOwner.get(d.owner);
    if (!names) this.#boxesByOwner.set(d.owner, names = new Map());
    if (delta > 0) names.set(d.name.toLowerCase(), box.id);
    else if (names.get(d.name.toLowerCase()) === box.id) names.delete(d.name.toLowerCase());
    if (names.size === 0) this.#boxesByOwner.delete(d.owner);
    for (const v of d.versions) {
      for (const p of v.providers) {
        if (!p.blob) continue;
        const n = (this.#blobRefs.get(p.blob.sha256) ?? 0) + delta;
        if (n > 0) this.#blobRefs.set(p.blob.sha256, n);
        else {
          this.#blobRefs.delete(p.blob.sha256);
          this.#orphanCandidates.add(p.blob.sha256);
        }
      }
    }
  }

  user(name: string): StoredDoc<UserDoc> | undefined {
    return this.store.get<UserDoc>(USERS, name.toLowerCase());
  }

  org(name: string): StoredDoc<OrgDoc> | undefined {
    return this.store.get<OrgDoc>(ORGS, name.toLowerCase());
  }

  /** The display name of a namespace (user or organization), or undefined when it does not exist. */
  namespaceName(key: string): string | undefined {
    return this.user(key)?.doc.username ?? this.org(key)?.doc.name;
  }

  namespaceDelinquent(key: string): boolean {
    return this.user(key)?.doc.delinquent ?? this.org(key)?.doc.delinquent ?? false;
  }

  box(owner: string, name: string): StoredDoc<BoxDoc> | undefined {
    const id = this.#boxesByOwner.get(owner.toLowerCase())?.get(name.toLowerCase());
    return id ? this.store.get<BoxDoc>(BOXES, id) : undefined;
  }

  boxesOf(owner: string): StoredDoc<BoxDoc>[] {
    const ids = this.#boxesByOwner.get(owner.toLowerCase());
    if (!ids) return [];
    return [...ids.values()].map((id) => this.store.get<BoxDoc>(BOXES, id)!).filter(Boolean);
  }

  allBoxes(): IterableIterator<StoredDoc<BoxDoc>> {
    return this.store.list<BoxDoc>(BOXES);
  }

  tag(box: BoxDoc): string {
    return `${this.namespaceName(box.owner) ?? box.owner}/${box.name}`;
  }

  maintenanceEnabled(): boolean {
    if (this.settings.maintenanceForced) return true;
    return this.store.get<{ enabled: boolean }>(SETTINGS, "maintenance")?.doc.enabled === true;
  }

  /**
   * Runs one registry mutation as one durable commit, excluding every other registry write (registry/write
   * exclusive): for writes that read or change across namespaces, and rare ones. Returns the plan's result.
   */
  write<R>(plan: () => CommitPlan<R> | Promise<CommitPlan<R>>): Promise<R> {
    return this.#commit(undefined, plan);
  }

  /**
   * Runs one mutation confined to the namespaces (and sessions, tokens) `keys` name (see locks.ts for the rule):
   * registry/write shared, `keys` exclusive, so writes on other keys run together and global ones exclude it.
   * `keys` must name everything the plan reads or decides on beyond what only global writes change.
   */
  writeIn<R>(keys: readonly string[], plan: () => CommitPlan<R> | Promise<CommitPlan<R>>): Promise<R> {
    return this.#commit(keys, plan);
  }

  async #commit<R>(
    keys: readonly string[] | undefined,
    plan: () => CommitPlan<R> | Promise<CommitPlan<R>>,
  ): Promise<R> {
    try {
      const { locks, sharedLocks } = registryLockSet(keys);
      const { result } = await this.store.transact(locks, plan, { sharedLocks });
      return result;
    } catch (err) {
      if (err instanceof VersionConflictError) {
        throw new ApiError(409, "The resource changed while it was being updated; try again");
      }
      throw err;
    } finally {
      this.scheduleOrphanCollection();
    }
  }

  holdBlob(sha256: string): void {
    this.pendingBlobs.set(sha256, (this.pendingBlobs.get(sha256) ?? 0) + 1);
  }

  releaseBlob(sha256: string): void {
    const n = (this.pendingBlobs.get(sha256) ?? 0) - 1;
    if (n > 0) this.pendingBlobs.set(sha256, n);
    else {
      this.pendingBlobs.delete(sha256);
      this.#orphanCandidates.add(sha256);
    }
    this.scheduleOrphanCollection();
  }

  /**
   * Deletes blobs that no provider references and no upload holds (one collection at a time): the blobs that
   * lost their last reference since the last run, and with `fullScan` every blob on disk older than the grace
   * (at start and every few minutes: what a crash or an older version left). Cheap when nothing changed.
   */
  scheduleOrphanCollection(options: { fullScan?: boolean } = {}): void {
    if (options.fullScan) this.#fullScanDue = true;
    if (!this.#fullScanDue && this.#orphanCandidates.size === 0) return;
    if (this.#collecting) {
      this.#collectAgain = true;
      return;
    }
    this.#collecting = (async () => {
      do {
        this.#collectAgain = false;
        const fullScan = this.#fullScanDue;
        this.#fullScanDue = false;
        const candidates = [...this.#orphanCandidates];
        this.#orphanCandidates.clear();
        const blobs = this.ctx.data.blobs;
        await blobs.removeOrphans(candidates, this.#blobInUse)
          .then(() => fullScan ? blobs.collectOrphans(this.#blobInUse, this.settings.orphanGraceMs) : 0)
          .catch((err) => this.ctx.logger.warn("registry: orphan collection failed", { error: String(err) }));
      } while (this.#collectAgain);
    })().finally(() => (this.#collecting = undefined));
  }

  /** Waits for a running orphan sweep (shutdown, tests). */
  async settle(): Promise<void> {
    while (this.#collecting) await this.#collecting;
  }
}
