// File-tree helpers for tests that prove nothing was written where it should not be.

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
