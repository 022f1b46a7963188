// Opens a file `backup create` writes beside its output (`.partial`, `.spool`) only if no file (or symlink) holds
// the name yet, readable by its owner alone: one that exists keeps its owner and mode, so writing through it could
// hand the documents to whoever made it.

/** Creates `path` (mode 0600, never an existing file or symlink); `read` also opens it for reading. */
export async function openFreshFile(path: string, options: { read?: boolean } = {}): Promise<Deno.FsFile> {
  try {
    return await Deno.open(path, { read: options.read ?? false, write: true, createNew: true, mode: 0o600 });
  } catch (err) {
    if (!(err instanceof Deno.errors.AlreadyExists)) throw err;
    throw new Error(
      `${path} already exists (left by a backup that was stopped, or not made by wharf): nothing was written to ` +
        `it; check it is not in use, remove it and run the backup again`,
    );
  }
}
