import { RE2JS } from "re2js";
const cases: [string, string][] = [
  ["(?i)[a-z] x300", "(?i)" + "[a-z]".repeat(300)],
  ["(?i)[Ā-\\uFFFF] x50", "(?i)" + "[Ā-\uFFFF]".repeat(50)],
  ["(?i)[^a] x50", "(?i)" + "[^a]".repeat(50)],
  ["(?i)[^ab] x50", "(?i)" + "[^ab]".repeat(50)],
  ["(?i). x300", "(?i)" + ".".repeat(300)],
  ["(?i)\\pL x100", "(?i)" + "\\pL".repeat(100)],
  ["\\pL x100", "\\pL".repeat(100)],
  ["\\PL x100", "\\PL".repeat(100)],
  ["(?i)[\\x{100}-\\x{1000}] x50", "(?i)" + "[\\x{100}-\\x{1000}]".repeat(50)],
  ["(?i)[A-Za-z0-9_] x100", "(?i)" + "[A-Za-z0-9_]".repeat(100)],
  ["(?i)\\w x300", "(?i)" + "\\w".repeat(300)],
  ["(?i)[[:^alpha:]] x50", "(?i)" + "[[:^alpha:]]".repeat(50)],
  ["(?i)\\W x50", "(?i)" + "\\W".repeat(50)],
  ["(?i)[\\x{41}-\\x{1E943}] x50", "(?i)" + "[\\x{41}-\\x{1E943}]".repeat(50)],
  ["(?i)[\\x{0}-\\x{41}] x50", "(?i)" + "[\\x{0}-\\x{41}]".repeat(50)],
  ["(?i)abc... 2000 literal", "(?i)" + "abcdefghij".repeat(200)],
  ["(?i)ĀāĂă literal 1000", "(?i)" + "Āā".repeat(500)],
  ["(?i)\\p{Greek} x100", "(?i)" + "\\p{Greek}".repeat(100)],
];
RE2JS.compile("warm(?i)[a-z]");
for (const [label, p] of cases) {
  const t = performance.now();
  try { RE2JS.compile(p); } catch (e) { console.log(label, "ERR", (e as Error).message.slice(0, 60)); continue; }
  console.log(label.padEnd(32), (performance.now() - t).toFixed(1), "ms");
}
