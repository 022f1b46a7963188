// Go's strconv conversions that filters rely on (lib/bexpr/gostr.ts), against answers recorded
// from Go 1.19's strconv.ParseFloat(s, 64) and strconv.ParseInt(s, 0, 64). "syntax"/"range" are Go's errors.

import { goParseFloat, goParseInt } from "../../lib/bexpr/gostr.ts";
import { goUnquote } from "../../lib/gostr.ts";
import { assertEquals } from "../helpers/assert.ts";

// [input, ParseFloat, ParseInt]
const recorded: Array<[string, number | "syntax" | "range", bigint | "syntax" | "range"]> = [
  ["1_0", 10, 10n],
  ["0x1p-2", 0.25, "syntax"],
  ["0x1.8p1", 3, "syntax"],
  ["1e400", "range", "syntax"],
  ["infinity", Infinity, "syntax"],
  ["-Inf", -Infinity, "syntax"],
  ["+nan", "syntax", "syntax"],
  ["1__0", "syntax", "syntax"],
  [".5", 0.5, "syntax"],
  ["5.", 5, "syntax"],
  ["0x", "syntax", "syntax"],
  ["0x1", "syntax", 1n],
  ["0x1f", "syntax", 31n],
  ["0o17", "syntax", 15n],
  ["017", 17, 15n],
  ["0b101", "syntax", 5n],
  ["1_000", 1000, 1000n],
  ["0_1", 1, 1n],
  ["08", 8, "syntax"],
  ["9223372036854775808", 9223372036854775808, "range"],
  ["-9223372036854775808", -9223372036854775808, -9223372036854775808n],
  ["18446744073709551616b", "syntax", "range"],
  ["_1", "syntax", "syntax"],
  ["1e-400", 0, "syntax"],
  ["0x_1p0", 1, "syntax"],
];

function outcome<T>(f: () => T): T | "syntax" | "range" {
  try {
    return f();
  } catch (err) {
    return (err as { kind: "syntax" | "range" }).kind;
  }
}

Deno.test("Go's ParseFloat and ParseInt (base 0) as filters use them", () => {
  for (const [s, float, int] of recorded) {
    assertEquals(outcome(() => goParseFloat(s)), float, `ParseFloat(${JSON.stringify(s)})`);
    assertEquals(outcome(() => goParseInt(s)), int, `ParseInt(${JSON.stringify(s)})`);
  }
});

Deno.test("Go's Unquote: escapes, raw strings without carriage returns, refusals", () => {
  assertEquals(goUnquote('"\\x2d\\055\\u212a\\U0001F600\\a\\v"'), "--\u212a\u{1F600}\x07\x0b");
  assertEquals(goUnquote("`a\r\nb\\n`"), "a\nb\\n");
  for (const bad of ['"\\\'"', '"\\/"', '"\\ud800"', '"\\400"', '"\\xZZ"', '"a\nb"', '"\\1"']) {
    assertEquals(goUnquote(bad), undefined, bad);
  }
  // \xff is a byte that is not UTF-8: kept apart so it never equals a valid string.
  assertEquals(goUnquote('"\\xe2\\x84\\xaa"'), "\u212a");
  assertEquals(goUnquote('"\\xff"') === "\xff", false);
});
