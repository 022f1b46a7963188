// Differential checks of wharf's filters against the real go-bexpr v0.1.14, through the conformance kit's
// evaluator (which calls it as Boundary's list handler does). Build it first: ../shared/conformance/run.sh build.
//
//   deno run -A tests/authmethods/bexpr_oracle.ts              # recorded answers in bexpr_cases.ts that differ
//   deno run -A tests/authmethods/bexpr_oracle.ts --print      # the cases with go-bexpr's answers, as TypeScript
//   deno run -A tests/authmethods/bexpr_oracle.ts --fuzz 20000 [--seed 7]
//       # N grammar-shaped and N token-soup random filters, go-bexpr vs wharf's parser and evaluator
//
// The evaluator is $WHARF_CONFORMANCE_CACHE/bin/bexpr-eval (default /tmp/wharf-conformance-<uid>/bin/…).

import { evaluateFilter } from "../../lib/bexpr/eval.ts";
import { FilterParseError, parseFilter } from "../../lib/bexpr/parse.ts";
import { type Case, cases, items } from "./bexpr_cases.ts";

type Answer = { rejects: true; match?: undefined } | { rejects?: undefined; match: string[] };

/** go-bexpr's answer for each filter, over `items`. */
async function goBexpr(filters: string[]): Promise<Answer[]> {
  const uid = new TextDecoder().decode(new Deno.Command("id", { args: ["-u"] }).outputSync().stdout).trim();
  const cache = Deno.env.get("WHARF_CONFORMANCE_CACHE") ??
    `${Deno.env.get("TMPDIR") ?? "/tmp"}/wharf-conformance-${uid}`;
  const itemsFile = await Deno.makeTempFile({ suffix: ".json" });
  await Deno.writeTextFile(itemsFile, JSON.stringify(items));
  const child = new Deno.Command(`${cache}/bin/bexpr-eval`, {
    args: ["-items", itemsFile],
    stdin: "piped",
    stdout: "piped",
  }).spawn();
  const writer = child.stdin.getWriter();
  const input = new TextEncoder().encode(filters.map((f) => JSON.stringify({ expr: f }) + "\n").join(""));
  // Read while writing: the evaluator answers line by line and would block on a full pipe.
  const [, out] = await Promise.all([writer.write(input).then(() => writer.close()), child.output()]);
  await Deno.remove(itemsFile);
  const lines = new TextDecoder().decode(out.stdout).split("\n").filter((l) => l !== "");
  if (lines.length !== filters.length) {
    throw new Error(`bexpr-eval answered ${lines.length} of ${filters.length}`);
  }
  return lines.map((l) => {
    const r = JSON.parse(l) as { parse_error: string | null; results: { id: string; match: boolean }[] };
    return r.parse_error !== null
      ? { rejects: true }
      : { match: r.results.filter((x) => x.match).map((x) => x.id) };
  });
}

/** wharf's answer, as the list endpoint gives it (an empty filter is no filter). */
function wharf(f: string): Answer {
  if (f === "") return { match: items.map((item) => item.id as string) };
  try {
    const expr = parseFilter(f);
    return { match: items.filter((item) => evaluateFilter(expr, { item })).map((item) => item.id as string) };
  } catch (err) {
    if (err instanceof FilterParseError) return { rejects: true };
    throw err;
  }
}

const show = (a: Answer) => (a.rejects ? "rejects" : JSON.stringify(a.match));

function arg(name: string): string | undefined {
  const i = Deno.args.indexOf(name);
  return i >= 0 ? Deno.args[i + 1] : undefined;
}

if (arg("--fuzz")) {
  const filters = fuzzFilters(Number(arg("--fuzz")), Number(arg("--seed") ?? 1));
  const answers = await goBexpr(filters);
  let differ = 0;
  let rejected = 0;
  answers.forEach((go, i) => {
    const f = filters[i]!;
    const ours = wharf(f);
    if (go.rejects) rejected++;
    if (show(go) !== show(ours)) {
      differ++;
      if (differ <= 20) console.log(`${JSON.stringify(f)}: go-bexpr ${show(go)}, wharf ${show(ours)}`);
    }
  });
  console.log(`${filters.length} random filters (${rejected} refused by go-bexpr), ${differ} differ`);
  if (differ) Deno.exit(1);
} else {
  const answers = await goBexpr(cases.map((c) => c.f));
  if (Deno.args.includes("--print")) {
    answers.forEach((a, i) => {
      const c: Case = { about: cases[i]!.about, f: cases[i]!.f, ...a };
      const outcome = c.rejects ? "rejects: true" : `match: ${JSON.stringify(c.match)}`;
      console.log(`  { about: ${JSON.stringify(c.about)}, f: ${JSON.stringify(c.f)}, ${outcome} },`);
    });
  } else {
    let differ = 0;
    answers.forEach((a, i) => {
      const c = cases[i]!;
      if (show(a) !== show(c.rejects ? { rejects: true } : { match: c.match ?? [] })) {
        differ++;
        console.log(`${JSON.stringify(c.f)}: recorded ${show(c as Answer)}, go-bexpr ${show(a)}`);
      }
    });
    console.log(`${cases.length} cases, ${differ} differ from go-bexpr`);
    if (differ) Deno.exit(1);
  }
}

/** Half grammar-shaped filters (odd spacing, selectors, operators, literal forms), half token soup. */
function fuzzFilters(n: number, seed: number): string[] {
  let s = seed >>> 0;
  const rnd = () => {
    // mulberry32
    s = (s + 0x6d2b79f5) >>> 0;
    let t = Math.imul(s ^ (s >>> 15), 1 | s);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
  const pick = <T>(xs: T[]) => xs[Math.floor(rnd() * xs.length)]!;
  const ws = () => pick(["", " ", " ", " ", " ", " ", " ", "  ", "\t", "\n"]);
  const not = () => pick(["", "not" + ws()]);
  const selectors = [
    ...["item.name", "item.urls.0", "item.urls.1", "item.urls.01", "item.urls.x", "item.version"],
    ...[
      "item.is_primary",
      "item.attributes",
      "item.attributes.state",
      "item.attributes.claims",
      "item.mixed",
    ],
    ...["item.nested.0", "item.nothing", "item.nope", "item.nope.x", '"/item/name"', '"/item/urls/0"'],
    ...['"/item/a~1b"', '""', 'item["name"]', 'item[ "urls" ].1', "item[0]", "name", "not", "and", "or"],
    ...["in", "is", "empty", "matches", "contains", "item.path", "item/name", "Item.name", "i", "u", "k"],
  ];
  const values = [
    ...["1", "1.5", "-1", "01", "1e0", "0x1", "1_0", "3x", "-", "--1", "1.", ".5", '"1.5"', '"+1"', '"Inf"'],
    ...['"NaN"', '"true"', "t", "true", "false", '""', '"/a~1b"', '"/a/b"', '"a\\"b"', '"a\\/b"', '"\\x2d3"'],
    ...['"\\055"', '"\\u212a"', "`raw`", "`a\\d`", '"corp"', "corp-ldap", "pass-word", "and", "not", "or"],
    ...["item.name", "item.urls.0", '"^c"', '"("', '"(?i)K"', '"\\\\pL"', '"[[:alpha:]]"', '"unterminated'],
    ...['"ldap"', '"-3"', "0"],
  ];
  const match = (): string => {
    const sel = pick(selectors);
    const v = pick(values);
    switch (Math.floor(rnd() * 8)) {
      case 0:
        return `${sel}${ws()}${pick(["==", "!="])}${ws()}${v}`;
      case 1:
        return `${sel}${ws()}is${ws()}${not()}empty`;
      case 2:
        return `${v}${ws()}${not()}in${ws()}${sel}`;
      case 3:
        return `${sel}${ws()}${not()}${pick(["contains", "matches"])}${ws()}${v}`;
      case 4: {
        const over = pick(["item.urls", "item.attributes", "item.nope", "item.name", "item.mixed"]);
        const as = pick(["u", "i, u", "i,_", "_, u", "u, u", "_"]);
        return `${pick(["any", "all"])}${ws()}${over}${ws()}as${ws()}${as}${ws()}{${ws()}${expr(1)}${ws()}}`;
      }
      default:
        return `${sel} == ${v}`;
    }
  };
  // Depth stays small: go-bexpr's parser is exponential in nesting.
  const expr = (d: number): string => {
    const r = rnd();
    if (d > 2 || r < 0.45) return match();
    if (r < 0.6) return `not${ws()}${expr(d + 1)}`;
    if (r < 0.75) return `(${ws()}${expr(d + 1)}${ws()}${pick([")", ")", ")", ""])}`;
    return `${expr(d + 1)}${ws()}${pick(["and", "or", "AND"])}${ws()}${expr(d + 1)}`;
  };
  const tokens = [
    ...'"`()!=/ .-_~:|\\abcdeinotmrsyx0123456789[]{},\t\n',
    ...["item", "item.", " and ", " or ", "not ", " in ", " == ", " is ", "empty", " matches ", " contains "],
    ...["any ", " as ", '"/item/', "name", "urls", "0x", "e5", "\\x", "\\u"],
  ];
  const out: string[] = [];
  for (let i = 0; i < n; i++) out.push(ws() + expr(0) + pick(["", "", "", "", " ", ")", "x"]));
  for (let i = 0; i < n; i++) {
    let f = "";
    for (let j = 1 + Math.floor(rnd() * 14); j > 0; j--) f += pick(tokens);
    out.push(f);
  }
  return out;
}
