// Go's string and number conversions as go-bexpr relies on them (strconv.Unquote, ParseBool, ParseInt with
// base 0, ParseFloat with 64 bits), written here from the Go specification and strconv's documentation.
//
// A Go string is a byte sequence and need not be valid UTF-8 (`"\xff"`). Such strings are held as JS strings
// in which every byte that is not part of a valid UTF-8 sequence is a lone surrogate U+DC80..U+DCFF (the
// "surrogateescape" mapping), so they never equal a valid string but can still be turned back into bytes.

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

const lowSurrogateByte = /(?<![\uD800-\uDBFF])[\uDC80-\uDCFF]/;

/** True when the string holds bytes that are not valid UTF-8 (see the mapping above). */
export function hasInvalidBytes(s: string): boolean {
  return lowSurrogateByte.test(s);
}

const encoder = new TextEncoder();

/** The Go bytes of a string (the inverse of the mapping above). */
export function goBytes(s: string): Uint8Array {
  if (!hasInvalidBytes(s)) return encoder.encode(s);
  const out: number[] = [];
  for (const ch of s) {
    const cp = ch.codePointAt(0)!;
    if (cp >= 0xdc80 && cp <= 0xdcff) out.push(cp - 0xdc00);
    else out.push(...encoder.encode(ch));
  }
  return Uint8Array.from(out);
}

/** Decodes bytes as Go does (utf8.DecodeRune), each invalid byte becoming U+DC80+byte. */
export function fromGoBytes(b: Uint8Array): string {
  try {
    return new TextDecoder("utf-8", { fatal: true, ignoreBOM: true }).decode(b);
  } catch {
    // Not valid UTF-8: decode sequence by sequence.
  }
  let out = "";
  let i = 0;
  while (i < b.length) {
    const n = validSequenceLength(b, i);
    if (n === 0) {
      out += String.fromCharCode(0xdc00 + b[i]!);
      i++;
    } else {
      out += new TextDecoder().decode(b.subarray(i, i + n));
      i += n;
    }
  }
  return out;
}

/** Length of the valid UTF-8 sequence starting at i (RFC 3629: no overlongs, surrogates or > U+10FFFF), or 0. */
function validSequenceLength(b: Uint8Array, i: number): number {
  const c = b[i]!;
  const cont = (k: number, lo = 0x80, hi = 0xbf) => i + k < b.length && b[i + k]! >= lo && b[i + k]! <= hi;
  if (c < 0x80) return 1;
  if (c >= 0xc2 && c <= 0xdf) return cont(1) ? 2 : 0;
  if (c >= 0xe0 && c <= 0xef) {
    const lo = c === 0xe0 ? 0xa0 : 0x80;
    const hi = c === 0xed ? 0x9f : 0xbf;
    return cont(1, lo, hi) && cont(2) ? 3 : 0;
  }
  if (c >= 0xf0 && c <= 0xf4) {
    const lo = c === 0xf0 ? 0x90 : 0x80;
    const hi = c === 0xf4 ? 0x8f : 0xbf;
    return cont(1, lo, hi) && cont(2) && cont(3) ? 4 : 0;
  }
  return 0;
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

const simpleEscapes: Record<string, number> = {
  a: 7,
  b: 8,
  f: 12,
  n: 10,
  r: 13,
  t: 9,
  v: 11,
  "\\": 92,
  '"': 34,
};
const isHex = (c: string | undefined) => c !== undefined && /^[0-9A-Fa-f]$/.test(c);

/**
 * strconv.Unquote of a "…" or `…` literal (quotes included), or undefined where Go refuses it: a raw
 * string drops carriage returns; a double-quoted one takes Go's escapes (\a \b \f \n \r \t \v \\ \" \xHH
 * \OOO \uHHHH \UHHHHHHHH) and no raw newline.
 */
export function goUnquote(lit: string): string | undefined {
  if (lit.length < 2) return undefined;
  const q = lit[0]!;
  const body = lit.slice(1, -1);
  if (lit[lit.length - 1] !== q) return undefined;
  if (q === "`") return body.includes("`") ? undefined : body.replaceAll("\r", "");
  if (q !== '"') return undefined;
  if (body.includes("\n")) return undefined;
  if (!body.includes("\\")) return body.includes('"') ? undefined : body;
  const bytes: number[] = [];
  let i = 0;
  while (i < body.length) {
    const c = body[i]!;
    if (c === '"') return undefined;
    if (c !== "\\") {
      const cp = body.codePointAt(i)!;
      const ch = String.fromCodePoint(cp);
      bytes.push(...encoder.encode(ch));
      i += ch.length;
      continue;
    }
    const e = body[i + 1];
    if (e === undefined) return undefined;
    if (e in simpleEscapes) {
      bytes.push(simpleEscapes[e]!);
      i += 2;
    } else if (e === "x") {
      if (!isHex(body[i + 2]) || !isHex(body[i + 3])) return undefined;
      bytes.push(parseInt(body.slice(i + 2, i + 4), 16));
      i += 4;
    } else if (e === "u" || e === "U") {
      const n = e === "u" ? 4 : 8;
      const hex = body.slice(i + 2, i + 2 + n);
      if (hex.length !== n || ![...hex].every((h) => isHex(h))) return undefined;
      const cp = parseInt(hex, 16);
      if (cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff)) return undefined;
      bytes.push(...encoder.encode(String.fromCodePoint(cp)));
      i += 2 + n;
    } else if (e >= "0" && e <= "7") {
      const oct = body.slice(i + 1, i + 4);
      if (!/^[0-7]{3}$/.test(oct)) return undefined;
      const v = parseInt(oct, 8);
      if (v > 255) return undefined;
      bytes.push(v);
      i += 4;
    } else {
      return undefined;
    }
  }
  return fromGoBytes(Uint8Array.from(bytes));
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
