// Go's number conversions and strings.Contains as go-bexpr relies on them (ParseBool, ParseInt with base 0,
// ParseFloat with 64 bits), written here from the Go specification and strconv's documentation. Go strings and
// strconv.Unquote: lib/gostr.ts.

import { goBytes, hasInvalidBytes } from "../gostr.ts";

/** strconv.ErrSyntax vs strconv.ErrRange: go-bexpr skips list elements on the first, fails on the second. */
export class GoNumError extends Error {
  constructor(readonly kind: "syntax" | "range", input: string) {
    super(
      `strconv: parsing ${JSON.stringify(input)}: ${
        kind === "syntax" ? "invalid syntax" : "value out of range"
      }`,
    );
  }
}

/** strings.Contains on Go strings (byte-wise when either side holds invalid bytes). */
export function goContains(haystack: string, needle: string): boolean {
  if (!hasInvalidBytes(needle) && !hasInvalidBytes(haystack)) return haystack.includes(needle);
  const h = goBytes(haystack);
  const n = goBytes(needle);
  outer: for (let i = 0; i + n.length <= h.length; i++) {
    for (let j = 0; j < n.length; j++) if (h[i + j] !== n[j]) continue outer;
    return true;
  }
  return false;
}

/** strconv.ParseBool. */
export function goParseBool(s: string): boolean {
  switch (s) {
    case "1":
    case "t":
    case "T":
    case "TRUE":
    case "true":
    case "True":
      return true;
    case "0":
    case "f":
    case "F":
    case "FALSE":
    case "false":
    case "False":
      return false;
  }
  throw new GoNumError("syntax", s);
}

/** Go's rule for `_` digit separators (allowed only between digits, or after a base prefix). */
function underscoreOK(s: string): boolean {
  let saw = "^";
  let i = 0;
  if (s.length >= 1 && (s[0] === "-" || s[0] === "+")) s = s.slice(1);
  let hex = false;
  if (s.length >= 2 && s[0] === "0" && "bBoOxX".includes(s[1]!)) {
    i = 2;
    saw = "0";
    hex = s[1] === "x" || s[1] === "X";
  }
  for (; i < s.length; i++) {
    const c = s[i]!;
    if ((c >= "0" && c <= "9") || (hex && /[a-fA-F]/.test(c))) {
      saw = "0";
      continue;
    }
    if (c === "_") {
      if (saw !== "0") return false;
      saw = "_";
      continue;
    }
    if (saw === "_") return false;
    saw = "!";
  }
  return saw !== "_";
}

const maxInt64 = (1n << 63n) - 1n;
const maxUint64 = (1n << 64n) - 1n;

/** strconv.ParseInt(s, 0, 64): sign, 0x/0o/0b or leading-0 octal prefix, `_` separators. */
export function goParseInt(s: string): bigint {
  const s0 = s;
  if (s === "") throw new GoNumError("syntax", s0);
  let neg = false;
  if (s[0] === "+" || s[0] === "-") {
    neg = s[0] === "-";
    s = s.slice(1);
  }
  const u = s;
  if (s === "") throw new GoNumError("syntax", s0);
  let base = 10;
  if (s[0] === "0") {
    const p = s[1]?.toLowerCase();
    if (s.length >= 3 && (p === "b" || p === "o" || p === "x")) {
      base = p === "b" ? 2 : p === "o" ? 8 : 16;
      s = s.slice(2);
    } else {
      base = 8;
      s = s.slice(1);
    }
  }
  let n = 0n;
  let underscores = false;
  for (const c of s) {
    if (c === "_") {
      underscores = true;
      continue;
    }
    const d = /^[0-9a-zA-Z]$/.test(c) ? parseInt(c, 36) : NaN;
    if (Number.isNaN(d) || d >= base) throw new GoNumError("syntax", s0);
    n = n * BigInt(base) + BigInt(d);
    // As Go: an overflow of 64 bits is reported as soon as it happens, whatever follows.
    if (n > maxUint64) throw new GoNumError("range", s0);
  }
  if (underscores && !underscoreOK(u)) throw new GoNumError("syntax", s0);
  if (neg ? n > maxInt64 + 1n : n > maxInt64) throw new GoNumError("range", s0);
  return neg ? -n : n;
}

/** strconv.ParseFloat(s, 64): decimal and hex (0x…p…) forms, `_` separators, inf/infinity/nan. */
export function goParseFloat(s: string): number {
  const special = parseSpecial(s);
  if (special !== undefined) return special;
  let i = 0;
  let neg = false;
  if (s[i] === "+" || s[i] === "-") {
    neg = s[i] === "-";
    i++;
  }
  let hex = false;
  if (i + 2 < s.length && s[i] === "0" && (s[i + 1] === "x" || s[i + 1] === "X")) {
    hex = true;
    i += 2;
  }
  const mantStart = i;
  let sawDot = false;
  let sawDigits = false;
  let underscores = false;
  for (; i < s.length; i++) {
    const c = s[i]!;
    if (c === "_") underscores = true;
    else if (c === ".") {
      if (sawDot) break;
      sawDot = true;
    } else if ((c >= "0" && c <= "9") || (hex && /[a-fA-F]/.test(c))) sawDigits = true;
    else break;
  }
  if (!sawDigits) throw new GoNumError("syntax", s);
  const mantissa = s.slice(mantStart, i).replaceAll("_", "");
  let exp = 0;
  let expText = "";
  if (i < s.length && s[i]!.toLowerCase() === (hex ? "p" : "e")) {
    i++;
    if (i >= s.length) throw new GoNumError("syntax", s);
    let esign = "";
    if (s[i] === "+" || s[i] === "-") esign = s[i++]!;
    if (i >= s.length || s[i]! < "0" || s[i]! > "9") throw new GoNumError("syntax", s);
    const start = i;
    while (i < s.length && ((s[i]! >= "0" && s[i]! <= "9") || s[i] === "_")) {
      if (s[i] === "_") underscores = true;
      i++;
    }
    expText = esign + s.slice(start, i).replaceAll("_", "");
    exp = Number(expText);
  } else if (hex) {
    throw new GoNumError("syntax", s);
  }
  if (underscores && !underscoreOK(s.slice(0, i))) throw new GoNumError("syntax", s);
  if (i !== s.length) throw new GoNumError("syntax", s);
  const v = hex ? hexFloat(mantissa, exp) : Number(`${mantissa}${expText ? `e${expText}` : ""}`);
  if (!Number.isFinite(v)) throw new GoNumError("range", s);
  return neg ? -v : v;
}

/** "inf", "infinity" (any case, optional sign) and "nan" (any case, no sign), which must be the whole input. */
function parseSpecial(s: string): number | undefined {
  let t = s;
  let sign = 1;
  if (t[0] === "+" || t[0] === "-") {
    sign = t[0] === "-" ? -1 : 1;
    t = t.slice(1);
    const l = t.toLowerCase();
    return l === "inf" || l === "infinity" ? sign * Infinity : undefined;
  }
  const l = t.toLowerCase();
  if (l === "inf" || l === "infinity") return Infinity;
  if (l === "nan") return NaN;
  return undefined;
}

/** A hexadecimal mantissa (digits with an optional point) times 2^exp, rounded to nearest even. */
function hexFloat(mantissa: string, exp: number): number {
  const dot = mantissa.indexOf(".");
  const digits = mantissa.replace(".", "");
  if (dot >= 0) exp -= 4 * (mantissa.length - dot - 1);
  let m = BigInt(`0x${digits || "0"}`);
  if (m === 0n) return 0;
  if (!Number.isFinite(exp) || exp > 5000) return Infinity;
  if (exp < -5000) return 0;
  // Keep 54 significant bits plus a sticky bit, so the final conversion rounds once.
  let e = exp;
  const bits = m.toString(2).length;
  if (bits > 64) {
    const shift = BigInt(bits - 64);
    const sticky = (m & ((1n << shift) - 1n)) !== 0n ? 1n : 0n;
    m = (m >> shift) | sticky;
    e += bits - 64;
  }
  // m (≤ 64 bits) × 2^e: scale in two steps so no intermediate power overflows or flushes to zero.
  const top = Number(m); // rounds to 53 bits: exact enough unless the result is subnormal
  const half = Math.trunc(e / 2);
  return top * 2 ** half * 2 ** (e - half);
}
