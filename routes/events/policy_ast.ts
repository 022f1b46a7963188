// The syntax tree both policy front ends (HCL and JSON) produce, shaped as Nomad's HCL v1 library shapes it:
// an object list of items, each with one or more keys and a value. The decoder (policy_decode.ts) reads it the
// way Nomad's `hcl.Decode` does, so quirks of that library (labels as keys, repeated keys, flattened JSON)
// come out the same.

import { decodeGoBytes, goUnquote, unescapeGo } from "../../lib/gostr.ts";

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
      const value = token.json ? goUnquote(token.text, { backquoted: false }) : unquoteHcl(token.text);
      if (value === undefined) throw new GoPanic(`unquote ${token.text} err: invalid syntax`);
      return value;
    }
    default:
      throw new GoPanic(`unimplemented Value for type: ${token.type}`);
  }
}

const utf8 = new TextEncoder();

/** Text as a UTF-8 reader sees Go's string: each byte that is not UTF-8 becomes U+FFFD. */
export function goBytesToText(s: string): string {
  return s.replace(/\p{Cs}/gu, "\uFFFD");
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
    const e = unescapeGo(s, 1, { surrogatesAsReplacement: true });
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
