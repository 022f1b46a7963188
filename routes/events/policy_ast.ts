// The syntax tree both policy front ends (HCL and JSON) produce, shaped as Nomad's HCL v1 library shapes it:
// an object list of items, each with one or more keys and a value. The decoder (policy_decode.ts) reads it the
// way Nomad's `hcl.Decode` does, so quirks of that library (labels as keys, repeated keys, flattened JSON)
// come out the same.

/** A source position; line 0 means "unknown" (JSON nodes carry none), printed as `-`. */
export interface Pos {
  line: number;
  column: number;
}

export const noPos: Pos = Object.freeze({ line: 0, column: 0 });

export type TokenType =
  | "ILLEGAL"
  | "EOF"
  | "COMMENT"
  | "IDENT"
  | "NUMBER"
  | "FLOAT"
  | "BOOL"
  | "STRING"
  | "HEREDOC"
  | "NULL"
  | "LBRACK"
  | "LBRACE"
  | "COMMA"
  | "PERIOD"
  | "COLON"
  | "RBRACK"
  | "RBRACE"
  | "ASSIGN"
  | "ADD"
  | "SUB";

export interface Token {
  type: TokenType;
  pos: Pos;
  /** The source text of the token, quotes included for strings. */
  text: string;
  /** A string from JSON rules: unquoted by Go's rules rather than HCL's. */
  json?: boolean;
  /** The decoded value (or the panic decoding it), computed once. */
  value?: string | GoPanic;
}

export interface ObjectList {
  kind: "list";
  items: ObjectItem[];
}

export interface ObjectItem {
  kind: "item";
  keys: Token[];
  val: Node;
}

export interface ObjectType {
  kind: "object";
  pos: Pos;
  list: ObjectList;
}

export interface ListType {
  kind: "listtype";
  pos: Pos;
  list: Node[];
}

export interface LiteralType {
  kind: "literal";
  token: Token;
}

export type Node = ObjectList | ObjectItem | ObjectType | ListType | LiteralType;

/** An error with a position, printed `At line:col: message` as HCL prints its own. */
export class PosError extends Error {
  constructor(pos: Pos, message: string) {
    super(`At ${posText(pos)}: ${message}`);
    this.name = "PosError";
  }
}

/**
 * Something Nomad's parser survives only by recovering from a Go panic (a string it cannot unquote, a block
 * list that does not line up); Nomad reports it as `invalid acl policy: <panic>`.
 */
export class GoPanic extends Error {
  constructor(message: string) {
    super(message);
    this.name = "GoPanic";
  }
}

/** Input past wharf's own limits (nesting depth), which Nomad's parser does not have. */
export class LimitError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "LimitError";
  }
}

export function posText(pos: Pos): string {
  return pos.line > 0 ? `${pos.line}:${pos.column}` : "-";
}

export function nodePos(node: Node): Pos {
  switch (node.kind) {
    case "list":
      return node.items.length === 0 ? noPos : nodePos(node.items[0]!);
    case "item":
      return node.keys.length === 0 ? noPos : node.keys[0]!.pos;
    case "object":
    case "listtype":
      return node.pos;
    case "literal":
      return node.token.pos;
  }
}

/** The Go type name HCL's errors print for a node. */
export function goNodeType(node: Node): string {
  const names = {
    list: "*ast.ObjectList",
    item: "*ast.ObjectItem",
    object: "*ast.ObjectType",
    listtype: "*ast.ListType",
    literal: "*ast.LiteralType",
  } as const;
  return names[node.kind];
}

// ---------------------------------------------------------------------------------------------------------
// Key matching (Go's strings.EqualFold, close enough for the keys policies use)

function foldRune(c: string): string {
  return c.toUpperCase().toLowerCase();
}

/** Case-insensitive equality rune by rune, as Go's `strings.EqualFold` (simple folding). */
export function equalFold(a: string, b: string): boolean {
  if (a === b) return true;
  let ascii = true;
  for (let i = 0; i < a.length && ascii; i++) if (a.charCodeAt(i) >= 0x80) ascii = false;
  for (let i = 0; i < b.length && ascii; i++) if (b.charCodeAt(i) >= 0x80) ascii = false;
  if (ascii) {
    if (a.length !== b.length) return false;
    for (let i = 0; i < a.length; i++) {
      const x = a.charCodeAt(i);
      const y = b.charCodeAt(i);
      if (x === y) continue;
      const lx = x >= 65 && x <= 90 ? x + 32 : x;
      const ly = y >= 65 && y <= 90 ? y + 32 : y;
      if (lx !== ly) return false;
    }
    return true;
  }
  // Beyond ASCII: simple folds such as the Kelvin sign or the long s.
  const ra = [...a];
  const rb = [...b];
  if (ra.length !== rb.length) return false;
  for (let i = 0; i < ra.length; i++) {
    const x = ra[i]!;
    const y = rb[i]!;
    if (x !== y && foldRune(x) !== foldRune(y) && x.toLowerCase() !== y.toLowerCase()) return false;
  }
  return true;
}

/** Items whose leading keys equal `key` (case-insensitively), copied with that key removed. */
export function filterList(list: ObjectList, key: string): ObjectList {
  const items: ObjectItem[] = [];
  for (const item of list.items) {
    if (item.keys.length < 1) continue;
    const k = tokenString(item.keys[0]!);
    if (k !== key && !equalFold(k, key)) continue;
    items.push({ kind: "item", keys: item.keys.slice(1), val: item.val });
  }
  return { kind: "list", items };
}

/** Items that still have keys (labelled blocks after a filter). */
export function children(list: ObjectList): ObjectList {
  return { kind: "list", items: list.items.filter((i) => i.keys.length > 0) };
}

/** Items without keys (the matches themselves after a filter). */
export function elems(list: ObjectList): ObjectList {
  return { kind: "list", items: list.items.filter((i) => i.keys.length === 0) };
}

// ---------------------------------------------------------------------------------------------------------
// Token values

/** The string value of a key or string token; throws GoPanic where HCL's Token.Value panics. */
export function tokenString(token: Token): string {
  let value = token.value;
  if (value === undefined) {
    try {
      value = computeTokenString(token);
    } catch (err) {
      if (!(err instanceof GoPanic)) throw err;
      value = err;
    }
    token.value = value;
  }
  if (value instanceof GoPanic) throw value;
  return value;
}

function computeTokenString(token: Token): string {
  switch (token.type) {
    case "IDENT":
      return token.text;
    case "HEREDOC":
      return unindentHeredoc(token.text);
    case "STRING": {
      if (token.text === "") return "";
      const value = token.json ? unquoteGo(token.text) : unquoteHcl(token.text);
      if (value === undefined) throw new GoPanic(`unquote ${token.text} err: invalid syntax`);
      return value;
    }
    default:
      throw new GoPanic(`unimplemented Value for type: ${token.type}`);
  }
}

const utf8 = new TextEncoder();

/**
 * Decodes bytes as Go reads a string: valid UTF-8 sequences become their characters, every other byte b stays
 * a byte, held as the lone surrogate U+DC00+b (it cannot come from the text itself, whose lone surrogates
 * are U+FFFD by then). `goQuote` prints such a byte as Go does (`\xff`); `goBytesToText` turns each into
 * U+FFFD, as Go's JSON encoder and a UTF-8 reader of Go's output do.
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

/** Text as a UTF-8 reader sees Go's string: each byte that is not UTF-8 becomes U+FFFD. */
export function goBytesToText(s: string): string {
  return s.replace(/\p{Cs}/gu, "\uFFFD");
}

function hexValue(s: string): number | undefined {
  return /^[0-9a-fA-F]+$/.test(s) ? parseInt(s, 16) : undefined;
}

/**
 * Decodes one backslash escape at `s[at]` (the character after the backslash). Returns the bytes it stands
 * for and the index after it, or undefined when invalid. `hclRunes`: HCL's rule for \u/\U (up to U+10FFFF,
 * surrogates allowed) instead of Go's (valid runes only).
 */
function unescape(s: string, at: number, hclRunes: boolean): { bytes: number[]; next: number } | undefined {
  const c = s[at];
  const simple: Record<string, number> = {
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
  if (c === undefined) return undefined;
  if (c in simple) return { bytes: [simple[c]!], next: at + 1 };
  if (c === "x" || c === "u" || c === "U") {
    const n = c === "x" ? 2 : c === "u" ? 4 : 8;
    const digits = s.slice(at + 1, at + 1 + n);
    if (digits.length < n) return undefined;
    const v = hexValue(digits);
    if (v === undefined) return undefined;
    if (c === "x") return { bytes: [v], next: at + 1 + n };
    if (v > 0x10ffff) return undefined;
    const isSurrogate = v >= 0xd800 && v <= 0xdfff;
    if (isSurrogate && !hclRunes) return undefined;
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

/** Go's strconv.Unquote for a double-quoted string (JSON rules). */
export function unquoteGo(text: string): string | undefined {
  if (text.length < 2 || text[0] !== '"' || text[text.length - 1] !== '"') return undefined;
  const s = text.slice(1, -1);
  if (s.includes("\n")) return undefined;
  if (!s.includes("\\") && !s.includes('"')) return s;
  const bytes: number[] = [];
  let i = 0;
  while (i < s.length) {
    const c = s[i]!;
    if (c === '"') return undefined;
    if (c !== "\\") {
      const cp = s.codePointAt(i)!;
      const ch = String.fromCodePoint(cp);
      bytes.push(...utf8.encode(ch));
      i += ch.length;
      continue;
    }
    const e = unescape(s, i + 1, false);
    if (!e) return undefined;
    bytes.push(...e.bytes);
    i = e.next;
  }
  return decodeGoBytes(bytes);
}

/** HCL's own unquote: Go's rules plus `${…}` sections kept verbatim. */
export function unquoteHcl(text: string): string | undefined {
  if (text.length < 2 || text[0] !== '"' || text[text.length - 1] !== '"') return undefined;
  let s = text.slice(1, -1);
  if (!s.includes("$") && !s.includes("{") && s.includes("\n")) return undefined;
  if (!s.includes("\\") && !s.includes('"') && !s.includes("$")) return s;
  const bytes: number[] = [];
  while (s.length > 0) {
    if (s.startsWith("${")) {
      bytes.push(36, 123);
      s = s.slice(2);
      let braces = 1;
      while (s.length > 0 && braces > 0) {
        const ch = String.fromCodePoint(s.codePointAt(0)!);
        s = s.slice(ch.length);
        bytes.push(...utf8.encode(ch));
        if (ch === "{") braces++;
        else if (ch === "}") braces--;
      }
      if (braces !== 0) return undefined;
      continue;
    }
    const c = s[0]!;
    if (c === "\n" || c === '"') return undefined;
    if (c !== "\\") {
      const ch = String.fromCodePoint(s.codePointAt(0)!);
      bytes.push(...utf8.encode(ch));
      s = s.slice(ch.length);
      continue;
    }
    const e = unescape(s, 1, true);
    if (!e) return undefined;
    bytes.push(...e.bytes);
    s = s.slice(e.next);
  }
  return decodeGoBytes(bytes);
}

/** A heredoc's value: the lines between the anchors, `<<-` removing their common indentation. */
function unindentHeredoc(text: string): string {
  // Byte arithmetic on purpose: HCL cuts the closing anchor off by the opening anchor's length.
  const b = utf8.encode(text);
  const idx = b.indexOf(10);
  if (idx < 0) throw new GoPanic("heredoc doesn't contain newline");
  const slice = (from: number, to: number) => {
    if (to < from || to > b.length) {
      throw new GoPanic(`runtime error: slice bounds out of range [${from}:${to}]`);
    }
    return decodeGoBytes(b.subarray(from, to));
  };
  if (b[2] !== 45 /* - */) return slice(idx + 1, b.length - idx + 1);
  const lines = slice(idx + 1, b.length - idx + 2).split("\n");
  const prefix = lines[lines.length - 1]!;
  if (!lines.every((l) => l.startsWith(prefix))) {
    return slice(idx + 1, b.length - idx + 1).replace(/[ \t]+$/, "");
  }
  return lines.map((l, k) => (k === lines.length - 1 ? "" : l.slice(prefix.length))).join("\n");
}
