// Go string literals (lib/gostr.ts): raw and quoted strings, Go's escapes, bytes that are not UTF-8.

import { assertEquals } from "../helpers/assert.ts";
import { decodeGoBytes, goBytes, goUnquote, unescapeGo } from "../../lib/gostr.ts";

Deno.test("goUnquote takes raw strings unless a caller refuses them, and Go's escapes in quoted ones", () => {
  assertEquals(goUnquote("`a\\n`"), "a\\n");
  assertEquals(goUnquote("`a\\n`", { backquoted: false }), undefined);
  assertEquals(goUnquote('"a\\tb\\u00e9\\101"', { backquoted: false }), "a\tbéA");
  assertEquals(goUnquote('"\\ud800"'), undefined);
});

Deno.test("unescapeGo reads a surrogate \\u as U+FFFD only for HCL", () => {
  assertEquals(unescapeGo("\\ud800", 1), undefined);
  assertEquals(unescapeGo("\\ud800", 1, { surrogatesAsReplacement: true }), {
    bytes: [0xef, 0xbf, 0xbd],
    next: 6,
  });
  assertEquals(unescapeGo("\\U00110000", 1, { surrogatesAsReplacement: true }), undefined);
});

Deno.test("bytes that are not UTF-8 survive the round trip through a Go string", () => {
  const bytes = Uint8Array.from([0x61, 0xff, 0xe2, 0x84, 0xaa, 0xed, 0xa0, 0x80, 0xc2]);
  const s = decodeGoBytes(bytes);
  assertEquals(s, "a\uDCFF\u212a\uDCED\uDCA0\uDC80\uDCC2");
  assertEquals([...goBytes(s)], [...bytes]);
});
