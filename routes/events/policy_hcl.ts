// A tokenizer and parser for the HCL subset ACL policies use: blocks `name ["label"] { … }`, attributes
// `key = "s"` and `key = ["a", "b",]`, comments `#`, `//`, `/* */`. It yields a schema-free tree.

import { PolicyError } from "./policy_error.ts";

/** An attribute value: a string or a list of strings (the only values policies use). */
export type RuleValue = string | string[];

export interface RuleAttribute {
  kind: "attribute";
  name: string;
  value: RuleValue;
}

export interface RuleBlock {
  kind: "block";
  name: string;
  labels: string[];
  body: RuleItem[];
}

export type RuleItem = RuleAttribute | RuleBlock;

type TokenKind = "ident" | "string" | "{" | "}" | "[" | "]" | "=" | "," | "eof";

interface Token {
  kind: TokenKind;
  text: string;
  line: number;
  column: number;
}

/** Nomad prefixes every decoding failure with this; the position follows HCL's "At line:col:" form. */
function syntaxError(line: number, column: number, message: string): PolicyError {
  return new PolicyError(`Failed to parse ACL Policy: At ${line}:${column}: ${message}`);
}

const escapes: Record<string, string> = { '"': '"', "\\": "\\", n: "\n", t: "\t", r: "\r", "/": "/" };

export function tokenize(source: string): Token[] {
  const tokens: Token[] = [];
  let pos = 0;
  let line = 1;
  let lineStart = 0;
  const here = () => ({ line, column: pos - lineStart + 1 });
  while (pos < source.length) {
    const ch = source[pos]!;
    if (ch === "\n") {
      pos++;
      line++;
      lineStart = pos;
      continue;
    }
    if (ch === " " || ch === "\t" || ch === "\r" || ch === "\uFEFF") {
      pos++;
      continue;
    }
    if (ch === "#" || (ch === "/" && source[pos + 1] === "/")) {
      while (pos < source.length && source[pos] !== "\n") pos++;
      continue;
    }
    if (ch === "/" && source[pos + 1] === "*") {
      const start = here();
      const end = source.indexOf("*/", pos + 2);
      if (end < 0) throw syntaxError(start.line, start.column, "comment not terminated");
      for (let i = pos; i < end; i++) {
        if (source[i] === "\n") {
          line++;
          lineStart = i + 1;
        }
      }
      pos = end + 2;
      continue;
    }
    const start = here();
    if ("{}[]=,".includes(ch)) {
      tokens.push({ kind: ch as TokenKind, text: ch, ...start });
      pos++;
      continue;
    }
    if (ch === '"') {
      pos++;
      let value = "";
      for (;;) {
        const c = source[pos];
        if (c === undefined || c === "\n") {
          throw syntaxError(start.line, start.column, "literal not terminated");
        }
        pos++;
        if (c === '"') break;
        if (c !== "\\") {
          value += c;
          continue;
        }
        const e = source[pos];
        if (e === "u" && /^[0-9a-fA-F]{4}$/.test(source.slice(pos + 1, pos + 5))) {
          value += String.fromCharCode(parseInt(source.slice(pos + 1, pos + 5), 16));
          pos += 5;
          continue;
        }
        const mapped = e === undefined ? undefined : escapes[e];
        if (mapped === undefined) throw syntaxError(line, pos - lineStart, "unknown escape sequence");
        value += mapped;
        pos++;
      }
      tokens.push({ kind: "string", text: value, ...start });
      continue;
    }
    if (/[A-Za-z_]/.test(ch)) {
      let end = pos + 1;
      while (end < source.length && /[A-Za-z0-9_.-]/.test(source[end]!)) end++;
      tokens.push({ kind: "ident", text: source.slice(pos, end), ...start });
      pos = end;
      continue;
    }
    throw syntaxError(start.line, start.column, `illegal char ${JSON.stringify(ch)}`);
  }
  tokens.push({ kind: "eof", text: "", ...here() });
  return tokens;
}

/** Parses HCL text into items; throws PolicyError with HCL-style positions on syntax errors. */
export function parseHcl(source: string): RuleItem[] {
  const tokens = tokenize(source);
  let at = 0;
  const peek = () => tokens[at]!;
  const next = () => tokens[at++]!;
  const describe = (t: Token) => (t.kind === "eof" ? "end of input" : `${JSON.stringify(t.text)}`);
  const unexpected = (t: Token, wanted: string) =>
    syntaxError(t.line, t.column, `expected ${wanted}, got ${describe(t)}`);

  function parseList(): string[] {
    const values: string[] = [];
    for (;;) {
      const t = next();
      if (t.kind === "]") return values;
      if (t.kind !== "string") throw unexpected(t, "a string or ']'");
      values.push(t.text);
      const sep = next();
      if (sep.kind === "]") return values;
      if (sep.kind !== ",") throw unexpected(sep, "',' or ']'");
    }
  }

  function parseBody(depth: number, closing: "}" | "eof"): RuleItem[] {
    if (depth > 16) throw syntaxError(peek().line, peek().column, "blocks nested too deeply");
    const items: RuleItem[] = [];
    for (;;) {
      const t = next();
      if (t.kind === closing) return items;
      if (t.kind !== "ident" && t.kind !== "string") {
        throw unexpected(t, closing === "}" ? "a key or '}'" : "a key");
      }
      const after = peek();
      if (after.kind === "=") {
        next();
        const v = next();
        if (v.kind === "string") items.push({ kind: "attribute", name: t.text, value: v.text });
        else if (v.kind === "[") items.push({ kind: "attribute", name: t.text, value: parseList() });
        // HCL also spells a block as an object assignment: `node = { policy = "read" }`.
        else if (v.kind === "{") {
          items.push({ kind: "block", name: t.text, labels: [], body: parseBody(depth + 1, "}") });
        } else throw unexpected(v, "a string or a list of strings");
        continue;
      }
      const labels: string[] = [];
      while (peek().kind === "string" || peek().kind === "ident") labels.push(next().text);
      const open = next();
      if (open.kind !== "{") throw unexpected(open, "'=' or '{'");
      items.push({ kind: "block", name: t.text, labels, body: parseBody(depth + 1, "}") });
    }
  }

  return parseBody(0, "eof");
}
