// wharf's filter parser and evaluator against go-bexpr v0.1.14's recorded answers (bexpr_cases.ts, checked
// against the real library by bexpr_oracle.ts): one test per mismatch class the conformance kit reported.

import { evaluateFilter } from "../../lib/bexpr/eval.ts";
import { FilterParseError, parseFilter } from "../../lib/bexpr/parse.ts";
import { cases, items } from "./bexpr_cases.ts";
import { assert, assertEquals } from "../helpers/assert.ts";

function wharfAnswer(f: string): { rejects: true } | { match: string[] } {
  // As in Boundary's list handler (and listing.ts), an empty filter builds no evaluator: everything matches.
  if (f === "") return { match: items.map((item) => item.id as string) };
  let expr;
  try {
    expr = parseFilter(f);
  } catch (err) {
    if (err instanceof FilterParseError) return { rejects: true };
    throw err;
  }
  return { match: items.filter((item) => evaluateFilter(expr, { item })).map((item) => item.id as string) };
}

const classes = [...new Set(cases.map((c) => c.about))];

for (const about of classes) {
  Deno.test(`filters as go-bexpr: ${about}`, () => {
    for (const c of cases.filter((c) => c.about === about)) {
      assert(c.rejects || c.match, `${JSON.stringify(c.f)} has no recorded answer`);
      const expected = c.rejects ? { rejects: true } : { match: c.match };
      assertEquals(wharfAnswer(c.f), expected, JSON.stringify(c.f));
    }
  });
}
