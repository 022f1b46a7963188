// The importer's progress: live lines redrawn in place on a terminal, plain lines elsewhere.

import { assert, assertEquals, assertStringIncludes } from "../helpers/assert.ts";
import { Progress } from "../../cli/import/progress.ts";

Deno.test("on a terminal each file in flight has a live line with bytes, rate and ETA under an overall bar", async () => {
  let out = "";
  const progress = new Progress({ write: (t) => void (out += t), terminal: true });
  progress.queued();
  progress.queued();
  const id = progress.start("acme/devbox 1.0.0 virtualbox/amd64");
  progress.sized(id, 4 * 1024 * 1024);
  progress.advanced(id, 1024 * 1024);
  await new Promise((r) => setTimeout(r, 300));
  assert(
    /acme\/devbox 1\.0\.0 virtualbox\/amd64 {2}1\.0 MiB \/ 4\.0 MiB {2}\S+ \S+\/s {2}ETA \d+:\d\d/.test(out),
    out,
  );
  assertStringIncludes(out, "] 0/2 files, 1.0 MiB");
  progress.finished(id, { ok: true });
  assertStringIncludes(out, "\x1b[2A\x1b[0J", "the live lines are redrawn in place");
  assertStringIncludes(out, "copied acme/devbox 1.0.0 virtualbox/amd64: 1.0 MiB in");
  assertStringIncludes(out, "] 1/2 files");
  progress.close();
});

Deno.test("without a terminal progress is plain lines: start with size, end with rate or failure", () => {
  const lines: string[] = [];
  const progress = new Progress({ write: (t) => lines.push(t), terminal: false });
  const a = progress.start("acme/a 1.0.0 virtualbox/amd64");
  progress.sized(a, 2048);
  progress.advanced(a, 2048);
  progress.finished(a, { ok: true });
  const b = progress.start("acme/b 1.0.0 libvirt/amd64");
  progress.sized(b, undefined);
  progress.finished(b, { ok: false, error: "Checksum mismatch" });
  progress.close();
  assertEquals(lines[0], "copying acme/a 1.0.0 virtualbox/amd64 (2.0 KiB)\n");
  assert(lines[1]!.startsWith("copied acme/a 1.0.0 virtualbox/amd64: 2.0 KiB in "), lines[1]);
  assertEquals(lines.slice(2), [
    "copying acme/b 1.0.0 libvirt/amd64\n",
    "FAILED acme/b 1.0.0 libvirt/amd64: Checksum mismatch\n",
  ]);
  assert(!lines.join("").includes("\x1b"), "no escape codes");
});
