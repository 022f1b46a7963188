// The shape of an archive's manifest (docs/operations.md "The archive"): what verify and restore read of it, checked
// before they read it, so a manifest that agrees with its checksum but not with the format is a damaged archive.

/** An entry as the manifest lists it (and as its header in the archive says). */
export interface ListedEntry {
  name: string;
  size: number;
  sha256: string;
}

/** An incremental's base: the archive file beside it that holds the blobs it only names. */
export interface BaseReference {
  file: string;
  manifest_sha256: string;
  snapshot_index: number;
  blobs: string[];
}

/** What `backup create` writes as manifest.json (the members verify and restore read). */
export interface BackupManifest {
  snapshot_index: number;
  first_index: number;
  batches: number;
  documents: number;
  blobs: number;
  root_key: boolean;
  base: BaseReference | null;
  entries: ListedEntry[];
  [member: string]: unknown;
}

const sha256Form = /^[0-9a-f]{64}$/;
const counts = ["snapshot_index", "first_index", "batches", "documents", "blobs"] as const;

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

function isCount(value: unknown): boolean {
  return Number.isSafeInteger(value) && (value as number) >= 0;
}

/** What is wrong with `value` as a manifest (the first thing found), or undefined when it has the shape. */
export function manifestShapeProblem(value: unknown): string | undefined {
  if (!isRecord(value)) return `it is ${value === null ? "null" : typeof value}, not an object`;
  for (const member of counts) {
    if (!isCount(value[member])) return `its ${member} is not a whole number of at least 0`;
  }
  if (typeof value.root_key !== "boolean") return "its root_key is not true or false";
  if (!Array.isArray(value.entries)) return "it lists no entries";
  for (const [i, entry] of value.entries.entries()) {
    if (
      !isRecord(entry) || typeof entry.name !== "string" || !isCount(entry.size) ||
      typeof entry.sha256 !== "string"
    ) {
      return `its entry ${i} is not a name, size and sha256`;
    }
  }
  return value.base === null || value.base === undefined ? undefined : baseProblem(value.base);
}

function baseProblem(base: unknown): string | undefined {
  if (
    !isRecord(base) || typeof base.file !== "string" || !/^[^/]+$/.test(base.file) ||
    base.file === "." || base.file === ".."
  ) {
    return "its base names no file beside it";
  }
  if (typeof base.manifest_sha256 !== "string" || !sha256Form.test(base.manifest_sha256)) {
    return "its base has no manifest_sha256";
  }
  if (!isCount(base.snapshot_index)) return "its base's snapshot_index is not a whole number of at least 0";
  if (!Array.isArray(base.blobs) || !base.blobs.every((b) => typeof b === "string" && sha256Form.test(b))) {
    return "its base's blobs are not a list of sha256s";
  }
  return undefined;
}
