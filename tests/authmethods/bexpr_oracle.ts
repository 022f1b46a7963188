// Checks the recorded go-bexpr answers in bexpr_cases.ts against the real go-bexpr v0.1.14, through the
// conformance kit's evaluator (Boundary's way of calling it). Build it first: ../shared/conformance/run.sh build.
//
//   deno run -A tests/authmethods/bexpr_oracle.ts            # lists cases whose recorded answer differs
//   deno run -A tests/authmethods/bexpr_oracle.ts --print    # prints the cases with go-bexpr's answers
//
// The evaluator is $WHARF_CONFORMANCE_CACHE/bin/bexpr-eval (default /tmp/wharf-conformance-<uid>/bin/…).

import { type Case, cases, items } from "./bexpr_cases.ts";

const uid = new Deno.Command("id", { args: ["-u"] }).outputSync();
const cache = Deno.env.get("WHARF_CONFORMANCE_CACHE") ??
  `${Deno.env.get("TMPDIR") ?? "/tmp"}/wharf-conformance-${new TextDecoder().decode(uid.stdout).trim()}`;
const bin = `${cache}/bin/bexpr-eval`;

const itemsFile = await Deno.makeTempFile({ suffix: ".json" });
await Deno.writeTextFile(itemsFile, JSON.stringify(items));
const child = new Deno.Command(bin, { args: ["-items", itemsFile], stdin: "piped", stdout: "piped" }).spawn();
const writer = child.stdin.getWriter();
const input = new TextEncoder().encode(cases.map((c) => JSON.stringify({ expr: c.f }) + "\n").join(""));
// Read while writing: the evaluator answers line by line and would block on a full pipe.
const [, out] = await Promise.all([writer.write(input).then(() => writer.close()), child.output()]);
await Deno.remove(itemsFile);
const lines = new TextDecoder().decode(out.stdout).split("\n").filter((l) => l !== "");
if (lines.length !== cases.length) throw new Error(`bexpr-eval answered ${lines.length} of ${cases.length}`);

const answers: Case[] = lines.map((l, i) => {
  const r = JSON.parse(l) as { parse_error: string | null; results: { id: string; match: boolean }[] };
  const c = cases[i]!;
  return r.parse_error !== null
    ? { about: c.about, f: c.f, rejects: true }
    : { about: c.about, f: c.f, match: r.results.filter((x) => x.match).map((x) => x.id) };
});

if (Deno.args.includes("--print")) {
  for (const a of answers) {
    const outcome = a.rejects ? "rejects: true" : `match: ${JSON.stringify(a.match)}`;
    console.log(`  { about: ${JSON.stringify(a.about)}, f: ${JSON.stringify(a.f)}, ${outcome} },`);
  }
} else {
  let differ = 0;
  answers.forEach((a, i) => {
    const c = cases[i]!;
    if (JSON.stringify([a.rejects, a.match]) !== JSON.stringify([c.rejects, c.match])) {
      differ++;
      console.log(
        `${JSON.stringify(c.f)}: recorded ${JSON.stringify(c.rejects ?? c.match)}, go-bexpr ${
          JSON.stringify(a.rejects ?? a.match)
        }`,
      );
    }
  });
  console.log(`${cases.length} cases, ${differ} differ from go-bexpr`);
  if (differ) Deno.exit(1);
}
