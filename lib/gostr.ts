// Go strings held in JS strings, and Go's strconv.Unquote over them: one port of Go's escape decoding for the
// bexpr list filters (lib/bexpr) and the Nomad ACL policy parsers (routes/events/policy_*).
//
// A Go string is a byte sequence and need not be valid UTF-8 (`"\xff"`). Such strings are held as JS strings
// in which every byte that is not part of a valid UTF-8 sequence is a lone surrogate U+DC80..U+DCFF (the
// "surrogateescape" mapping), so they never equal a valid string but can still be turned back into bytes.

const lowSurrogateByte = /(?<![\uD800-\uDBFF])[\uDC80-\uDCFF]/;

/** True when the string holds bytes that are not valid UTF-8 (see the mapping above). */
export function hasInvalidBytes(s: string): boolean {
  return lowSurrogateByte.test(s);
}

const utf8 = new TextEncoder();

/** The Go bytes of a string (the inverse of decodeGoBytes). */
export function goBytes(s: string): Uint8Array {
  if (!hasInvalidBytes(s)) return utf8.encode(s);
  const out: number[] = [];
  for (const ch of s) {
    const cp = ch.codePointAt(0)!;
    if (cp >= 0xdc80 && cp <= 0xdcff) out.push(cp - 0xdc00);
    else out.push(...utf8.encode(ch));
  }
  return Uint8Array.from(out);
}

/**
 * Decodes bytes as Go reads a string (utf8.DecodeRune): valid UTF-8 sequences become their characters, every
 * other byte b stays a byte, held as the lone surrogate U+DC00+b (it cannot come from text itself, whose lone
 * surrogates are U+FFFD once encoded).
 */
export function decodeGoBytes(b: Uint8Array | readonly number[]): string {
  let out = "";
  let i = 0;
  while (i < b.length) {
    const c = b[i]!;
    if (c < 0x80) {
      out += String.fromCharCode(c);
      i++;
      continue;
    }
    const need = c >= 0xc2 && c <= 0xdf ? 1 : c >= 0xe0 && c <= 0xef ? 2 : c >= 0xf0 && c <= 0xf4 ? 3 : 0;
    let cp = need === 1 ? c & 0x1f : need === 2 ? c & 0x0f : c & 0x07;
    let ok = need > 0;
    for (let k = 1; ok && k <= need; k++) {
      const d = b[i + k];
      if (d === undefined || (d & 0xc0) !== 0x80) ok = false;
      else cp = (cp << 6) | (d & 0x3f);
    }
    if (ok) {
      const min = need === 1 ? 0x80 : need === 2 ? 0x800 : 0x10000;
      if (cp < min || cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff)) ok = false;
    }
    if (ok) {
      out += String.fromCodePoint(cp);
      i += need + 1;
    } else {
      out += String.fromCharCode(0xdc00 + c);
      i++;
    }
  }
  return out;
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

export interface EscapeOptions {
  /**
   * HCL's rule for \u and \U: any value up to U+10FFFF, a surrogate standing for U+FFFD. Go's (the default)
   * refuses surrogates.
   */
  surrogatesAsReplacement?: boolean;
}

/**
 * Decodes the backslash escape whose letter is at `s[at]` (Go's \a \b \f \n \r \t \v \\ \" \xHH \OOO \uHHHH
 * \UHHHHHHHH): the bytes it stands for and the index after it, or undefined when Go refuses it.
 */
export function unescapeGo(
  s: string,
  at: number,
  options: EscapeOptions = {},
): { bytes: number[]; next: number } | undefined {
  const c = s[at];
  if (c === undefined) return undefined;
  if (c in simpleEscapes) return { bytes: [simpleEscapes[c]!], next: at + 1 };
  if (c === "x" || c === "u" || c === "U") {
    const n = c === "x" ? 2 : c === "u" ? 4 : 8;
    const digits = s.slice(at + 1, at + 1 + n);
    if (digits.length < n || !/^[0-9a-fA-F]+$/.test(digits)) return undefined;
    const v = parseInt(digits, 16);
    if (c === "x") return { bytes: [v], next: at + 1 + n };
    if (v > 0x10ffff) return undefined;
    const isSurrogate = v >= 0xd800 && v <= 0xdfff;
    if (isSurrogate && !options.surrogatesAsReplacement) return undefined;
    const rune = isSurrogate ? "\uFFFD" : String.fromCodePoint(v);
    return { bytes: [...utf8.encode(rune)], next: at + 1 + n };
  }
  if (c >= "0" && c <= "7") {
    const digits = s.slice(at, at + 3);
    if (!/^[0-7]{3}$/.test(digits)) return undefined;
    const v = parseInt(digits, 8);
    if (v > 255) return undefined;
    return { bytes: [v], next: at + 3 };
  }
  return undefined;
}

export interface UnquoteOptions {
  /** Whether a `…` raw string is accepted, as Go's strconv.Unquote does (default true). */
  backquoted?: boolean;
}

/**
 * strconv.Unquote of a "…" or `…` literal (quotes included), or undefined where Go refuses it: a raw string
 * drops carriage returns; a double-quoted one takes Go's escapes (unescapeGo) and no raw newline or quote.
 */
export function goUnquote(lit: string, options: UnquoteOptions = {}): string | undefined {
  if (lit.length < 2) return undefined;
  const q = lit[0]!;
  const body = lit.slice(1, -1);
  if (lit[lit.length - 1] !== q) return undefined;
  if (q === "`" && options.backquoted !== false) {
    return body.includes("`") ? undefined : body.replaceAll("\r", "");
  }
  if (q !== '"') return undefined;
  if (body.includes("\n")) return undefined;
  if (!body.includes("\\")) return body.includes('"') ? undefined : body;
  const bytes: number[] = [];
  let i = 0;
  while (i < body.length) {
    const c = body[i]!;
    if (c === '"') return undefined;
    if (c !== "\\") {
      const ch = String.fromCodePoint(body.codePointAt(i)!);
      bytes.push(...utf8.encode(ch));
      i += ch.length;
      continue;
    }
    const e = unescapeGo(body, i + 1);
    if (!e) return undefined;
    bytes.push(...e.bytes);
    i = e.next;
  }
  return decodeGoBytes(bytes);
}
