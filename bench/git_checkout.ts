// Another revision of this repository beside the checkout, for before/after benchmarks in one run.

/** A detached worktree of `rev` in a temp dir (its main.ts is the "before" server); `remove` deletes it. */
export async function checkout(rev: string): Promise<{ dir: string; remove(): Promise<void> }> {
  const dir = await Deno.makeTempDir({ prefix: "wharf-bench-before-" });
  const git = (...args: string[]) =>
    new Deno.Command("git", { args, stdout: "null", stderr: "piped" }).output();
  const added = await git("worktree", "add", "--detach", dir, rev);
  if (!added.success) throw new Error(`git worktree add ${rev}: ${new TextDecoder().decode(added.stderr)}`);
  return {
    dir,
    remove: async () => void await git("worktree", "remove", "--force", dir),
  };
}
