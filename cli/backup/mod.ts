// `wharf backup create|verify|restore`: the command line of lib/store/backup, configured by the settings a
// node uses (--data-dir, WHARF_DATABASE_URL, WHARF_BLOB_STORE and the S3 settings, WHARF_ROOT_KEY). Exit codes
// (docs/operations.md#backups): 0 done, 1 failed or damaged, 2 wrong usage or settings, 3 create: written without some
// referenced blobs / restore: the target is not empty.

import { packedCollections } from "../../app.ts";
import { ConfigError } from "../../lib/errors.ts";
import { s3Settings } from "../../lib/store/s3/settings.ts";
import { createBackup, formatBytes } from "../../lib/store/backup/create.ts";
import { defaultMaxEntryBytes, maxReadableEntryBytes } from "../../lib/store/backup/entry_caps.ts";
import { verifyBackup } from "../../lib/store/backup/verify.ts";
import { BackupDamagedError, restoreBackup, TargetNotEmptyError } from "../../lib/store/backup/restore.ts";

const usage = [
  "usage: wharf backup create --data-dir DIR --output FILE [--incremental-from FILE [--max-entry-bytes N]]",
  "                           [--include-root-key]",
  "       wharf backup verify --input FILE [--base FILE] [--max-entry-bytes N]",
  "       wharf backup restore --input FILE --data-dir DIR [--base FILE] [--root-key-out FILE] [--max-entry-bytes N]",
  "(a cluster: WHARF_DATABASE_URL, WHARF_BLOB_STORE and the S3 settings the nodes use)",
].join("\n");

const valued = [
  "--data-dir",
  "--output",
  "--incremental-from",
  "--input",
  "--base",
  "--root-key-out",
  "--max-entry-bytes",
];
const flags = ["--include-root-key"];

export interface BackupIo {
  out(line: string): void;
  err(line: string): void;
  /** A terminal shows progress on one rewritten line; otherwise only the summary is printed. */
  progress?(line: string): void;
}

export function processIo(): BackupIo {
  const io: BackupIo = { out: console.log, err: console.error };
  if (Deno.stderr.isTerminal()) {
    let last = 0;
    const encoder = new TextEncoder();
    io.progress = (line) => {
      const now = Date.now();
      if (now - last < 100) return;
      last = now;
      Deno.stderr.writeSync(encoder.encode(`\r\x1b[K${line.slice(0, 120)}`));
    };
    const clear = () => Deno.stderr.writeSync(encoder.encode("\r\x1b[K"));
    io.out = (line) => (clear(), console.log(line));
    io.err = (line) => (clear(), console.error(line));
  }
  return io;
}

/** Runs the command; returns the exit code. */
export async function runBackupCli(
  args: string[],
  env: Record<string, string>,
  io: BackupIo,
): Promise<number> {
  const [command, ...rest] = args;
  const options = parse(rest);
  if (!options || !["create", "verify", "restore"].includes(command ?? "")) {
    io.err(usage);
    return 2;
  }
  const run: Run = { options, env, io, progress: io.progress ?? (() => {}) };
  try {
    if (command === "create") return await create(run);
    if (command === "verify") return await verify(run);
    return await restore(run);
  } catch (e) {
    io.err(`wharf backup ${command}: ${e instanceof Error ? e.message : e}`);
    if (e instanceof ConfigError) return 2;
    if (e instanceof TargetNotEmptyError) return 3;
    return 1;
  }
}

function parse(args: string[]): Map<string, string> | undefined {
  const options = new Map<string, string>();
  for (let i = 0; i < args.length; i++) {
    const arg = args[i]!;
    if (flags.includes(arg)) options.set(arg, "");
    else if (valued.includes(arg) && args[i + 1] !== undefined) options.set(arg, args[++i]!);
    else return undefined;
  }
  return options;
}

/**
 * --max-entry-bytes: bytes, at least the default cap and at most what restore can read (entry_caps.ts); absent: the
 * default.
 */
function maxEntryBytes(options: Map<string, string>): { maxEntryBytes?: number } {
  const raw = options.get("--max-entry-bytes");
  if (raw === undefined) return {};
  const n = Number(raw);
  if (
    !/^\d+$/.test(raw) || !Number.isSafeInteger(n) || n < defaultMaxEntryBytes || n > maxReadableEntryBytes
  ) {
    const got = JSON.stringify(raw);
    throw new ConfigError(
      `--max-entry-bytes must be a number of bytes of at least ${defaultMaxEntryBytes} and at most ` +
        `${maxReadableEntryBytes} (the longest entry restore can read whole: V8's longest string), got ${got}`,
    );
  }
  return { maxEntryBytes: n };
}

function required(options: Map<string, string>, name: string): string {
  const value = options.get(name);
  if (!value) throw new ConfigError(`${name} is required\n${usage}`);
  return value;
}

/** One command's parsed options, settings and output. */
interface Run {
  options: Map<string, string>;
  env: Record<string, string>;
  io: BackupIo;
  progress: (line: string) => void;
}

async function create({ options, env, io, progress }: Run): Promise<number> {
  const databaseUrl = env.WHARF_DATABASE_URL;
  // As `storage migrate` and the server take it: --data-dir, else WHARF_DATA_DIR.
  if (!options.has("--data-dir") && env.WHARF_DATA_DIR) options.set("--data-dir", env.WHARF_DATA_DIR);
  const dataDir = databaseUrl ? options.get("--data-dir") ?? "" : required(options, "--data-dir");
  const output = required(options, "--output");
  const { s3 } = s3Settings(env);
  if (databaseUrl && !s3 && !dataDir) {
    throw new ConfigError(
      "a cluster with file blobs (no WHARF_BLOB_STORE): --data-dir names the node's blobs",
    );
  }
  const summary = await createBackup({
    source: {
      dataDir,
      ...(databaseUrl ? { databaseUrl } : {}),
      ...(s3 ? { s3 } : {}),
      packed: packedCollections,
      ...(env.WHARF_ROOT_KEY ? { rootKey: env.WHARF_ROOT_KEY } : {}),
    },
    output,
    ...(options.has("--incremental-from") ? { incrementalFrom: options.get("--incremental-from")! } : {}),
    ...maxEntryBytes(options),
    includeRootKey: options.has("--include-root-key"),
    progress,
  });
  const parts = [
    `backup ${output}: snapshot at index ${summary.index} (events ${summary.firstIndex}-${summary.index}, ` +
    `${summary.batches} batches), ${summary.documents} documents, ${summary.blobs} blobs ` +
    `(${formatBytes(summary.blobBytes)})`,
  ];
  if (summary.incremental) parts.push(`${summary.blobsInBase} blobs left in its base (restoring needs it)`);
  parts.push(`${formatBytes(summary.bytes)} written`);
  parts.push(
    summary.rootKey
      ? "root key included: keep this file as secret as the key"
      : "root key NOT included: restoring needs the same root key (WHARF_ROOT_KEY or root.key) or every token " +
        "is invalid and sealed secrets (OIDC client secrets, LDAP bind passwords, TOTP seeds) are unreadable",
  );
  if (summary.missingBlobs.length) {
    parts.push(`INCOMPLETE: ${summary.missingBlobs.length} referenced blobs are missing from the store`);
  }
  if (summary.needsMaxEntryBytes && summary.needsMaxEntryBytes > maxReadableEntryBytes) {
    parts.push(
      `UNRESTORABLE: an entry needs --max-entry-bytes ${summary.needsMaxEntryBytes}, over the most restore ` +
        `takes (${maxReadableEntryBytes}, V8's longest string): restore refuses this archive`,
    );
  } else if (summary.needsMaxEntryBytes) {
    const cap = formatBytes(defaultMaxEntryBytes);
    parts.push(
      `an entry is over the ${cap} verify and restore read whole by default: ` +
        `give them --max-entry-bytes ${summary.needsMaxEntryBytes}`,
    );
  }
  io.out(parts.join("; "));
  return summary.missingBlobs.length ? 3 : 0;
}

async function verify({ options, io, progress }: Run): Promise<number> {
  const input = required(options, "--input");
  let entries = 0;
  const result = await verifyBackup(input, {
    ...(options.has("--base") ? { basePath: options.get("--base")! } : {}),
    ...maxEntryBytes(options),
    progress: (entry) => progress(`verified ${++entries} entries (${entry.name})`),
  });
  if (result.problems.length) {
    for (const p of result.problems) io.err(`${input}: ${p}`);
    io.out(`backup ${input}: DAMAGED (${result.problems.length} problems)`);
    return 1;
  }
  const m = result.scan.manifest!;
  io.out(
    `backup ${input}: intact: ${result.scan.entries.length} entries, snapshot at index ${m.snapshot_index}, ` +
      `${m.documents} documents, ${m.blobs} blobs${
        result.base ? ` (with its base ${result.base.path})` : ""
      }, ` +
      `root key ${m.root_key ? "included" : "not included"}`,
  );
  return 0;
}

async function restore({ options, env, io, progress }: Run): Promise<number> {
  const input = required(options, "--input");
  const databaseUrl = env.WHARF_DATABASE_URL;
  const dataDir = databaseUrl ? options.get("--data-dir") : required(options, "--data-dir");
  const { s3 } = s3Settings(env);
  try {
    const summary = await restoreBackup({
      input,
      ...(options.has("--base") ? { basePath: options.get("--base")! } : {}),
      ...(dataDir ? { dataDir } : {}),
      ...(databaseUrl ? { databaseUrl } : {}),
      ...(s3 ? { s3 } : {}),
      ...(options.has("--root-key-out") ? { rootKeyOut: options.get("--root-key-out")! } : {}),
      ...maxEntryBytes(options),
      packed: packedCollections,
      progress,
    });
    const key = {
      written: "the root key restored with it",
      absent: "the archive holds no root key: start the server with the one the source used",
      "not written":
        "the archive's root key was not written (--root-key-out FILE): the nodes need it as WHARF_ROOT_KEY",
    }[summary.rootKey];
    io.out(
      `restored ${input} into ${
        databaseUrl ? "the database" : dataDir
      }: snapshot at index ${summary.index} ` +
        `(events ${summary.firstIndex}-${summary.index}), ${summary.documents} documents, ${summary.blobs} blobs; ${key}`,
    );
    return 0;
  } catch (e) {
    if (e instanceof BackupDamagedError) {
      for (const p of e.problems) io.err(`${input}: ${p}`);
      io.err(`wharf backup restore: ${input} is damaged: nothing was restored`);
      return 1;
    }
    throw e;
  }
}
