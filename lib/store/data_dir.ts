// A node's storage, opened as one: the data directory (file/: the NDJSON event log, documents checkpointed from
// it, blobs, usage counters) or, with a database URL, PostgreSQL (postgres/) and optionally S3 blobs (s3/).

import type { S3Settings } from "./s3/settings.ts";
import { ConfigError } from "../errors.ts";
import { Keyring, loadRootKey } from "../crypto.ts";
import { EventLog } from "./file/eventlog.ts";
import { FileSnapshots } from "./file/snapshots.ts";
import { defaultLogOptions, type EventLogOptions } from "./commit_log.ts";
import { DocumentStore } from "./documents.ts";
import { BlobStore } from "./file/blobs.ts";
import type { Blobs } from "./blobs.ts";
import { UsageCounters } from "./file/counters.ts";
import type { Counters } from "./counters.ts";
import type { CommitLog } from "./commit_log.ts";
import type { PostgresBackend } from "./postgres/mod.ts";
import { ensureDir } from "./file/fsutil.ts";

export interface DataDirOptions {
  log?: Partial<EventLogOptions>;
  rootKey?: string;
  checkpointMs?: number;
  /** Collections checkpointed as packs of many documents, not a file each (lib/store/file/packs.ts). */
  packedCollections?: readonly string[];
  /** `postgres://…`: documents, the log, counters and locks in PostgreSQL (docs/scale-out.md). */
  databaseUrl?: string;
  /** Blobs in an S3 bucket instead of the data dir (docs/scale-out.md). */
  s3?: S3Settings;
  /** With a database: this node's name in the cluster (WHARF_NODE_NAME). */
  nodeName?: string;
  /** With a database: a node silent this long no longer holds log rows back (WHARF_NODE_TIMEOUT). */
  nodeTimeoutMs?: number;
}

export interface StorageHealth {
  database?: "up" | "down";
  object_store?: "up" | "down";
  /** Committed batches this node has been told of and not applied yet. */
  lag?: number;
  /** Whether this node is the one writing checkpoints and applying log retention. */
  checkpoint_writer?: boolean;
}

export type { S3Settings };

/** A cluster node's numbers for metrics, read without waiting on the database or the object store. */
export interface ClusterStats {
  /** Committed batches the database announced that this node has not applied yet. */
  viewLag: number;
  databaseUp: boolean;
  commitBatches: number;
  commitMembers: number;
  poolWaiting: number;
  poolReplaced: number;
  /** Requests to the object store that could not reach it since start (undefined without S3). */
  objectStoreErrors: number | undefined;
}

export class DataDir {
  readonly path: string;
  readonly log: CommitLog;
  readonly store: DocumentStore;
  readonly blobs: Blobs;
  readonly keys: Keyring;
  #counters = new Map<string, Counters>();
  #postgres: PostgresBackend | undefined;
  #timer: ReturnType<typeof setInterval> | undefined;
  #lock: Deno.FsFile | undefined;
  #closed = false;

  private constructor(path: string, log: CommitLog, store: DocumentStore, blobs: Blobs, keys: Keyring) {
    this.path = path;
    this.log = log;
    this.store = store;
    this.blobs = blobs;
    this.keys = keys;
  }

  /** Opens or creates `path`; throws ConfigError when it cannot be used. */
  static async open(path: string, options: DataDirOptions = {}): Promise<DataDir> {
    const lock = await lockDataDir(path);
    let dir: DataDir;
    try {
      if (options.databaseUrl && !options.rootKey) {
        throw new ConfigError("WHARF_DATABASE_URL needs WHARF_ROOT_KEY: every node must share one root key");
      }
      const keys = new Keyring(await loadRootKey(options.rootKey, `${path}/root.key`));
      let postgres: PostgresBackend | undefined;
      let log: CommitLog;
      let store: DocumentStore;
      if (options.databaseUrl) {
        const { openPostgres } = await import("./postgres/mod.ts");
        postgres = await openPostgres(options.databaseUrl, {
          retainIndexes: options.log?.retainIndexes ?? defaultLogOptions.retainIndexes,
          retainBytes: options.log?.retainBytes ?? defaultLogOptions.retainBytes,
          pinBytes: options.log?.pinBytes ?? defaultLogOptions.pinBytes,
          nodeName: options.nodeName ?? `${Deno.hostname()}:${Deno.pid}:${crypto.randomUUID().slice(0, 8)}`,
          nodeTimeoutMs: options.nodeTimeoutMs ?? 30_000,
        });
        log = postgres.log;
        try {
          store = await DocumentStore.open(path, log, { snapshots: postgres.snapshots });
        } catch (err) {
          await postgres.close();
          throw err;
        }
      } else {
        const fileLog = await EventLog.open(`${path}/events`, options.log);
        log = fileLog;
        store = await DocumentStore.open(path, fileLog, {
          snapshots: new FileSnapshots(path, options.packedCollections),
        });
      }
      let blobs: Blobs;
      try {
        blobs = options.s3 ? await openS3Blobs(options.s3) : await BlobStore.open(`${path}/blobs`);
      } catch (err) {
        await postgres?.close();
        throw err;
      }
      dir = new DataDir(path, log, store, blobs, keys);
      dir.#postgres = postgres;
    } catch (err) {
      lock.close();
      throw err;
    }
    dir.#lock = lock;
    const every = options.checkpointMs ?? 1000;
    dir.#timer = setInterval(() => dir.#maintain().catch(() => {}), every);
    // Maintenance alone must not keep a process alive.
    Deno.unrefTimer(dir.#timer as unknown as number);
    return dir;
  }

  /** Usage counters named `name`, flushed with every checkpoint. */
  async counters(name: string): Promise<Counters> {
    let c = this.#counters.get(name);
    if (!c) {
      c = this.#postgres
        ? await this.#postgres.counters(name)
        : await UsageCounters.open(`${this.path}/usage`, name);
      this.#counters.set(name, c);
    }
    return c;
  }

  async #maintain(): Promise<void> {
    // A checkpoint slower than the interval must not start a second maintenance run beside it.
    if (this.#closed || this.#maintaining) return;
    this.#maintaining = true;
    try {
      if (this.#postgres) await this.#postgres.maintain(this.store);
      else {
        await this.store.checkpoint({ background: true });
        await this.log.applyRetention(this.store.checkpointIndex);
      }
      for (const c of this.#counters.values()) await c.flush();
    } finally {
      this.#maintaining = false;
    }
  }

  #maintaining = false;

  /** Closes the log, then writes out documents (unless `checkpoint: false`, which leaves them to replay). */
  async close(options: { checkpoint?: boolean } = {}): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    clearInterval(this.#timer);
    this.blobs.close();
    await this.log.close();
    try {
      if (options.checkpoint !== false) {
        if (this.#postgres) await this.#postgres.finish(this.store);
        else await this.store.checkpoint();
      }
      for (const c of this.#counters.values()) await c.flush();
    } finally {
      this.#lock?.close();
      await this.#postgres?.close();
    }
  }

  /**
   * Whether the scale-out engines answer and how many committed batches this node has not applied yet
   * (undefined on the data directory alone, whose /health stays as it was). The object store is probed
   * (a cached HeadBucket, waited on at most ~1.5 s: s3/probe.ts).
   */
  async storageHealth(): Promise<StorageHealth | undefined> {
    const s3 = this.blobs as { lastError?: unknown; reachable?: () => Promise<boolean> };
    if (!this.#postgres && !s3.reachable) return undefined;
    const health: StorageHealth = {};
    if (this.#postgres) {
      const log = this.#postgres.log;
      health.database = log.lastError ? "down" : "up";
      health.lag = Math.max(0, log.announcedIndex - log.lastIndex);
      health.checkpoint_writer = this.#postgres.cluster.leader;
    }
    if (s3.reachable) health.object_store = await s3.reachable() ? "up" : "down";
    return health;
  }

  /** The cluster's numbers for metrics (undefined on the data directory alone). */
  clusterStats(): ClusterStats | undefined {
    const s3 = this.blobs as { unreachableErrors?: number };
    const log = this.#postgres?.log;
    if (!log && s3.unreachableErrors === undefined) return undefined;
    const commits = log?.commitStats;
    const pool = log?.poolStats;
    return {
      viewLag: log ? Math.max(0, log.announcedIndex - log.lastIndex) : 0,
      databaseUp: log ? !log.lastError : true,
      commitBatches: commits?.batches ?? 0,
      commitMembers: commits?.members ?? 0,
      poolWaiting: pool?.waiting ?? 0,
      poolReplaced: pool?.replaced ?? 0,
      objectStoreErrors: s3.unreachableErrors,
    };
  }

  /** Which storage this node runs on (for /health and logs). */
  get backend(): "file" | "postgres" {
    return this.#postgres ? "postgres" : "file";
  }
}

/** Takes an exclusive lock on `<dir>/.lock` so two servers never share a data dir. */
export async function lockDataDir(path: string): Promise<Deno.FsFile> {
  let file: Deno.FsFile;
  try {
    // Creating the lock file also proves the folder is writable.
    await ensureDir(path);
    file = await Deno.open(`${path}/.lock`, { read: true, write: true, create: true });
  } catch (err) {
    throw new ConfigError(`data dir ${path} is not usable: ${err instanceof Error ? err.message : err}`);
  }
  // flock blocks while another process holds it: give up after a moment instead.
  let timer: ReturnType<typeof setTimeout> | undefined;
  const held = await Promise.race([
    file.lock(true).then(() => true),
    new Promise<false>((resolve) => (timer = setTimeout(() => resolve(false), 1000))),
  ]);
  clearTimeout(timer);
  if (!held) {
    // The pending lock call keeps its own reference; once it completes the descriptor closes and lets go.
    file.close();
    throw new ConfigError(`data dir ${path} is in use by another wharf process (${path}/.lock is locked)`);
  }
  return file;
}

async function openS3Blobs(settings: S3Settings): Promise<Blobs> {
  const { openBucket } = await import("./s3/open.ts");
  const { store } = await openBucket(settings, {
    downloads: settings.downloads,
    urlTtlMs: settings.urlTtlMs,
    removalGraceMs: settings.removalGraceMs,
  });
  return store;
}
