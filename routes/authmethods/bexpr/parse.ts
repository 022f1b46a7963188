// A parser for the go-bexpr filter language subset Boundary list filters use (spec §4): selectors in JSON
// Pointer or dotted form, == != is [not] empty, [not] in, [not] contains, [not] matches, and/or/not, ( ).

export type Selector = string[];

export type MatchOp =
  | "=="
  | "!="
  | "empty"
  | "notEmpty"
  | "in"
  | "notIn"
  | "contains"
  | "notContains"
  | "matches"
  | "notMatches";

export type Expr =
  | { kind: "and"; left: Expr; right: Expr }
  | { kind: "or"; left: Expr; right: Expr }
  | { kind: "not"; expr: Expr }
  | { kind: "match"; op: MatchOp; selector: Selector; value?: string; regex?: RegExp };

export class FilterParseError extends Error {
  readonly position: number;
  constructor(position: number, message: string) {
    super(`at position ${position + 1}: ${message}`);
    this.name = "FilterParseError";
    this.position = position;
  }
}

export const maxFilterLength = 2048;

type TokenKind = "string" | "raw" | "number" | "word" | "op" | "lparen" | "rparen" | "end";
interface Token {
  kind: TokenKind;
  text: string;
  pos: number;
}

const keywords = new Set(["and", "or", "not", "in", "is", "empty", "contains", "matches"]);

function tokenize(src: string): Token[] {
  const out: Token[] = [];
  let i = 0;
  while (i < src.length) {
    const c = src[i]!;
    if (/\s/.test(c)) {
      i++;
      continue;
    }
    const start = i;
    if (c === "(" || c === ")") {
      out.push({ kind: c === "(" ? "lparen" : "rparen", text: c, pos: i++ });
    } else if (c === "=" || c === "!") {
      if (src[i + 1] !== "=") throw new FilterParseError(i, `unexpected "${c}": did you mean "${c}="?`);
      out.push({ kind: "op", text: c + "=", pos: start });
      i += 2;
    } else if (c === '"') {
      let text = "";
      i++;
      for (;;) {
        if (i >= src.length) throw new FilterParseError(start, "unterminated string");
        const d = src[i]!;
        if (d === '"') break;
        if (d === "\\") {
          const e = src[i + 1];
          const map: Record<string, string> = { '"': '"', "\\": "\\", n: "\n", t: "\t", r: "\r", "/": "/" };
          if (e === undefined || !(e in map)) throw new FilterParseError(i, "invalid escape in string");
          text += map[e];
          i += 2;
          continue;
        }
        text += d;
        i++;
      }
      i++;
      out.push({ kind: "string", text, pos: start });
    } else if (c === "`") {
      const end = src.indexOf("`", i + 1);
      if (end < 0) throw new FilterParseError(start, "unterminated raw string");
      out.push({ kind: "raw", text: src.slice(i + 1, end), pos: start });
      i = end + 1;
    } else if (/[-0-9]/.test(c)) {
      const m = /^-?\d+(\.\d+)?(?![A-Za-z_])/.exec(src.slice(i));
      if (m) {
        out.push({ kind: "number", text: m[0], pos: start });
        i += m[0].length;
      } else {
        const w = /^[-A-Za-z0-9_./:]+/.exec(src.slice(i))!;
        out.push({ kind: "word", text: w[0], pos: start });
        i += w[0].length;
      }
    } else if (/[A-Za-z_]/.test(c)) {
      const w = /^[A-Za-z_][-A-Za-z0-9_./:]*/.exec(src.slice(i))!;
      out.push({ kind: "word", text: w[0], pos: start });
      i += w[0].length;
    } else {
      throw new FilterParseError(i, `unexpected character "${c}"`);
    }
  }
  out.push({ kind: "end", text: "", pos: src.length });
  return out;
}

/** Parses a filter; throws FilterParseError saying where and what was expected. */
export function parseFilter(src: string): Expr {
  if (src.length > maxFilterLength) {
    throw new FilterParseError(maxFilterLength, `the filter is longer than ${maxFilterLength} characters`);
  }
  const p = new Parser(tokenize(src));
  const e = p.expr();
  const t = p.peek();
  if (t.kind !== "end") {
    throw new FilterParseError(t.pos, `unexpected ${describe(t)}: expected "and", "or" or the end`);
  }
  return e;
}

function describe(t: Token): string {
  return t.kind === "end" ? "end of filter" : `"${t.text}"`;
}

class Parser {
  #tokens: Token[];
  #i = 0;
  #depth = 0;
  constructor(tokens: Token[]) {
    this.#tokens = tokens;
  }

  peek(offset = 0): Token {
    return this.#tokens[Math.min(this.#i + offset, this.#tokens.length - 1)]!;
  }

  next(): Token {
    const t = this.peek();
    if (this.#i < this.#tokens.length - 1) this.#i++;
    return t;
  }

  isWord(text: string, offset = 0): boolean {
    const t = this.peek(offset);
    return t.kind === "word" && t.text === text;
  }

  expect(text: string): void {
    const t = this.next();
    if (t.kind !== "word" || t.text !== text) {
      throw new FilterParseError(t.pos, `expected "${text}", found ${describe(t)}`);
    }
  }

  expr(): Expr {
    let left = this.and();
    while (this.isWord("or")) {
      this.next();
      left = { kind: "or", left, right: this.and() };
    }
    return left;
  }

  and(): Expr {
    let left = this.unary();
    while (this.isWord("and")) {
      this.next();
      left = { kind: "and", left, right: this.unary() };
    }
    return left;
  }

  unary(): Expr {
    if (++this.#depth > 100) throw new FilterParseError(this.peek().pos, "the filter is nested too deeply");
    try {
      if (this.isWord("not")) {
        this.next();
        return { kind: "not", expr: this.unary() };
      }
      if (this.peek().kind === "lparen") {
        this.next();
        const e = this.expr();
        const t = this.next();
        if (t.kind !== "rparen") throw new FilterParseError(t.pos, `expected ")", found ${describe(t)}`);
        return e;
      }
      return this.match();
    } finally {
      this.#depth--;
    }
  }

  match(): Expr {
    const first = this.next();
    if (
      !["string", "raw", "number", "word"].includes(first.kind) ||
      (first.kind === "word" && keywords.has(first.text))
    ) {
      throw new FilterParseError(first.pos, `expected a selector or a value, found ${describe(first)}`);
    }
    // `value [not] in selector`
    if (this.isWord("in") || (this.isWord("not") && this.isWord("in", 1))) {
      const negated = this.isWord("not");
      if (negated) this.next();
      this.next();
      const selector = this.selector();
      return { kind: "match", op: negated ? "notIn" : "in", selector, value: first.text };
    }
    const selector = selectorOf(first);
    const t = this.next();
    if (t.kind === "op") {
      return { kind: "match", op: t.text as "==" | "!=", selector, value: this.value() };
    }
    if (t.kind === "word" && t.text === "is") {
      const negated = this.isWord("not");
      if (negated) this.next();
      this.expect("empty");
      return { kind: "match", op: negated ? "notEmpty" : "empty", selector };
    }
    let negated = false;
    let opToken = t;
    if (t.kind === "word" && t.text === "not") {
      negated = true;
      opToken = this.next();
    }
    if (opToken.kind === "word" && opToken.text === "contains") {
      return { kind: "match", op: negated ? "notContains" : "contains", selector, value: this.value() };
    }
    if (opToken.kind === "word" && opToken.text === "matches") {
      const valuePos = this.peek().pos;
      const value = this.value();
      return {
        kind: "match",
        op: negated ? "notMatches" : "matches",
        selector,
        value,
        regex: compileRegex(value, valuePos),
      };
    }
    throw new FilterParseError(
      opToken.pos,
      `expected one of "==", "!=", "is", "in", "contains", "matches", found ${describe(opToken)}`,
    );
  }

  selector(): Selector {
    return selectorOf(this.next());
  }

  value(): string {
    const t = this.next();
    if (
      t.kind === "string" || t.kind === "raw" || t.kind === "number" ||
      (t.kind === "word" && !keywords.has(t.text))
    ) {
      return t.text;
    }
    throw new FilterParseError(t.pos, `expected a value, found ${describe(t)}`);
  }
}

function selectorOf(t: Token): Selector {
  if (t.kind === "string") {
    if (!/^(\/[A-Za-z0-9\-_.~:|]+)+$/.test(t.text)) {
      throw new FilterParseError(
        t.pos,
        `"${t.text}" is not a selector: use a JSON Pointer like "/item/name"`,
      );
    }
    return t.text.slice(1).split("/").map((s) => s.replaceAll("~1", "/").replaceAll("~0", "~"));
  }
  if (
    t.kind === "word" && /^[A-Za-z][A-Za-z0-9_/]*(\.[A-Za-z][A-Za-z0-9_/]*)*$/.test(t.text) &&
    !keywords.has(t.text)
  ) {
    return t.text.split(".");
  }
  throw new FilterParseError(t.pos, `expected a selector, found ${describe(t)}`);
}

/** Compiles an RE2-style pattern; backreferences and lookaround (not in RE2, and not linear-time) are refused. */
function compileRegex(pattern: string, pos: number): RegExp {
  if (/\\[1-9]|\\k<|\(\?<?[=!]/.test(pattern)) {
    throw new FilterParseError(pos, "backreferences and lookaround are not supported in regular expressions");
  }
  const translated = pattern.replace(/\(\?P</g, "(?<");
  let flags = "u";
  let body = translated;
  const m = /^\(\?([imsU]+)\)/.exec(translated);
  if (m) {
    if (m[1]!.includes("U")) throw new FilterParseError(pos, "the U flag is not supported");
    flags += m[1]!;
    body = translated.slice(m[0].length);
  }
  try {
    return new RegExp(body, flags);
  } catch (err) {
    throw new FilterParseError(pos, `invalid regular expression: ${(err as Error).message}`);
  }
}
