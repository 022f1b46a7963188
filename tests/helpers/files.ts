// File-tree helpers for tests: temporary folders, and proof that nothing was written where it should not be.

/** Every path under `root` (relative, sorted), not descending into `skip` (a relative path). */
export async function listTree(root: string, skip?: string): Promise<string[]> {
  const found: string[] = [];
  const walk = async (relative: string) => {
    for await (const entry of Deno.readDir(relative ? `${root}/${relative}` : root)) {
      const path = relative ? `${relative}/${entry.name}` : entry.name;
      if (path === skip) continue;
      found.push(path);
      if (entry.isDirectory) await walk(path);
    }
  };
  await walk("");
  return found.sort();
}

/** The text of every file under a data dir but its root key (to search it for secrets in plaintext). */
export async function dataDirText(dir: string): Promise<string> {
  let text = "";
  const walk = async (path: string) => {
    for await (const e of Deno.readDir(path)) {
      const p = `${path}/${e.name}`;
      if (e.isDirectory) await walk(p);
      else if (e.isFile && e.name !== "root.key") text += await Deno.readTextFile(p) + "\n";
    }
  };
  await walk(dir);
  return text;
}

/** Runs `fn` with a new temporary folder, removed (with everything in it) after. */
export async function withTempDir<T>(fn: (dir: string) => Promise<T>): Promise<T> {
  const dir = await Deno.makeTempDir();
  try {
    return await fn(dir);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
}
