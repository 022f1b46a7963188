// Runs the load scenarios in bench/scenarios and the standalone benchmark scripts (all, or those whose name
// contains an argument) and prints each one's figures with its same-run baseline and ratio.

import { type Figure, formatFigures } from "./lib.ts";

const filters = Deno.args;
const dir = new URL("./scenarios/", import.meta.url);
const names = [...Deno.readDirSync(dir)].map((e) => e.name).filter((n) => n.endsWith(".ts")).sort();
console.log(`# wharf benchmarks, ${new Date().toISOString()}, deno ${Deno.version.deno}\n`);
for (const name of names) {
  if (filters.length && !filters.some((f) => name.includes(f))) continue;
  const mod = await import(new URL(name, dir).href);
  const started = performance.now();
  try {
    const result: { title: string; figures: Figure[]; notes?: string[] } = await mod.default();
    console.log(formatFigures(result.title, result.figures));
    for (const note of result.notes ?? []) console.log(`- ${note}`);
    console.log(`(scenario ${name} took ${((performance.now() - started) / 1000).toFixed(1)} s)\n`);
  } catch (err) {
    console.log(`### ${name}\n\nfailed: ${err instanceof Error ? err.message : err}\n`);
  }
}

/** Benchmarks that run as their own process (they start servers, clients and fixtures of their own). */
const scripts = [
  "events_publish.ts",
  "events_fanout.ts",
  "events_replay.ts",
  "authmethods_ldap.ts",
  "authmethods_refresh.ts",
  "access_log_lines.ts",
];
/** Scripts whose stderr is the measured output itself (millions of log lines), not for the terminal. */
const quietStderr = new Set(["access_log_lines.ts"]);
for (const name of scripts) {
  if (filters.length && !filters.some((f) => name.includes(f))) continue;
  console.log(`### ${name}\n`);
  const started = performance.now();
  const out = await new Deno.Command(Deno.execPath(), {
    args: ["run", "-A", new URL(`./${name}`, import.meta.url).pathname],
    stdout: "inherit",
    stderr: quietStderr.has(name) ? "null" : "inherit",
  }).output();
  const took = ((performance.now() - started) / 1000).toFixed(1);
  console.log(`(script ${name} ${out.success ? "took" : "failed after"} ${took} s)\n`);
}
