// Durable file primitives: write-all, directory fsync and atomic replacement through a temp file.

export const tempSuffix = ".tmp";

export async function writeAll(file: Deno.FsFile, bytes: Uint8Array): Promise<void> {
  let offset = 0;
  while (offset < bytes.length) offset += await file.write(bytes.subarray(offset));
}

/** fsyncs a directory so a rename or unlink inside it survives a crash. */
export async function syncDir(path: string): Promise<void> {
  const dir = await Deno.open(path, { read: true });
  try {
    await dir.sync();
  } finally {
    dir.close();
  }
}

let tempCounter = 0;

/**
 * Replaces `path` with `bytes` (or the chunks, written as they are produced, by a generator or an async one):
 * temp file in the same folder, fsync, rename, fsync the folder.
 */
export async function atomicWrite(
  path: string,
  bytes: Uint8Array | Iterable<Uint8Array> | AsyncIterable<Uint8Array>,
  options: { syncFolder?: boolean } = {},
) {
  const tmp = `${path}.${Deno.pid}.${++tempCounter}${tempSuffix}`;
  const file = await Deno.open(tmp, { write: true, create: true, truncate: true, mode: 0o600 });
  try {
    for await (const chunk of bytes instanceof Uint8Array ? [bytes] : bytes) await writeAll(file, chunk);
    await file.syncData();
  } catch (e) {
    file.close();
    await Deno.remove(tmp).catch(() => {});
    throw e;
  }
  file.close();
  await Deno.rename(tmp, path);
  if (options.syncFolder !== false) await syncDir(dirname(path));
}

export function dirname(path: string): string {
  const i = path.lastIndexOf("/");
  return i <= 0 ? (i === 0 ? "/" : ".") : path.slice(0, i);
}

/** Removes leftover temp files (`*.tmp`) in `dir`; returns how many were removed. */
export async function removeTempFiles(dir: string): Promise<number> {
  let removed = 0;
  for await (const entry of Deno.readDir(dir)) {
    if (entry.isFile && entry.name.endsWith(tempSuffix)) {
      await Deno.remove(`${dir}/${entry.name}`).catch(() => {});
      removed++;
    }
  }
  return removed;
}

/** The entries of `dir`, none when it does not exist. */
export function readDirOrEmpty(dir: string): Deno.DirEntry[] {
  try {
    return [...Deno.readDirSync(dir)];
  } catch (err) {
    if (err instanceof Deno.errors.NotFound) return [];
    throw err;
  }
}

export async function ensureDir(path: string): Promise<void> {
  await Deno.mkdir(path, { recursive: true });
}
