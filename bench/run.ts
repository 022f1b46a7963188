// Runs the load scenarios in bench/scenarios (all, or those whose name contains an argument) and prints
// each one's figures as a Markdown table with its same-run baseline and ratio.

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
