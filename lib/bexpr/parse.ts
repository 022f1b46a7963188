// The filter language of Boundary's list endpoints: go-bexpr v0.1.14's grammar, parsed as its PEG parser
// does (ordered choice with backtracking), so exactly the same filters are accepted. Written from the
// grammar's rules; see docs/auth-methods.md "Filters".
//
// Two properties of that parser matter for what is accepted:
// - an error raised anywhere while trying an alternative (an invalid number literal such as `1e5`, a string
//   strconv.Unquote refuses, `item[0]`, an unclosed parenthesis or string) fails the whole filter, even
//   when another alternative would have matched;
// - whitespace is required around `and`, `or`, `not`, `in`, `contains`, `matches`, `is`, `empty`, and
//   optional around `==` / `!=`.
//
// Unlike go-bexpr, results are memoized per (rule, position), so parsing is linear rather than exponential in
// the nesting depth, and filters are limited in length and nesting (the deliberate protections).

import { goUnquote } from "../gostr.ts";

/** A selector's path: `item.a.b`, `item["a"]` and `"/item/a"` all give segments. */
export type Selector = string[];

export type MatchOp =
  | "=="
  | "!="
  | "empty"
  | "notEmpty"
  | "in"
  | "notIn"
  | "matches"
  | "notMatches";

/** How an any/all expression names each element: `as v`, `as i, v`, `as i, _`, `as _, v`. */
export interface Binding {
  mode: "default" | "index" | "value" | "indexAndValue";
  default?: string;
  index?: string;
  value?: string;
}

export interface MatchExpr {
  kind: "match";
  op: MatchOp;
  selector: Selector;
  /** The operand as go-bexpr holds it (a selector operand is its dotted or slash-joined text). */
  value?: string;
  /** Compiled on first use (as go-bexpr does): an invalid pattern fails only the items that reach it. */
  regex?: { re?: { test(input: string): boolean }; error?: string };
}

export type Expr =
  | { kind: "and"; left: Expr; right: Expr }
  | { kind: "or"; left: Expr; right: Expr }
  | { kind: "not"; expr: Expr }
  | MatchExpr
  | { kind: "collection"; all: boolean; selector: Selector; binding: Binding; inner: Expr };

export class FilterParseError extends Error {
  readonly position: number;
  constructor(position: number, message: string) {
    super(`at position ${position + 1}: ${message}`);
    this.name = "FilterParseError";
    this.position = position;
  }
}

/** Deliberate limits go-bexpr lacks: filter length (UTF-16 code units) and nesting of ( ) and { }. */
export const maxFilterLength = 2048;
export const maxFilterDepth = 64;

/**
 * The `filter` query parameter (null when absent). Percent-encoded bytes that are not UTF-8 are refused, as
 * go-bexpr refuses invalid UTF-8 (URLSearchParams would quietly turn them into U+FFFD).
 */
export function filterParam(url: URL): string | null {
  const value = url.searchParams.get("filter");
  if (value === null || !value.includes("\uFFFD")) return value;
  for (const part of url.search.slice(1).split("&")) {
    const eq = part.indexOf("=");
    const name = eq < 0 ? part : part.slice(0, eq);
    if (decodeQueryPart(name) !== "filter") continue;
    const bytes = percentDecode(eq < 0 ? "" : part.slice(eq + 1));
    try {
      new TextDecoder("utf-8", { fatal: true }).decode(bytes);
    } catch {
      throw new FilterParseError(0, "the filter is not valid UTF-8");
    }
    return value; // the first occurrence is the one URLSearchParams returned
  }
  return value;
}

function percentDecode(s: string): Uint8Array {
  const out: number[] = [];
  const utf8 = new TextEncoder();
  for (let i = 0; i < s.length; i++) {
    const c = s[i]!;
    if (c === "%" && /^[0-9A-Fa-f]{2}$/.test(s.slice(i + 1, i + 3))) {
      out.push(parseInt(s.slice(i + 1, i + 3), 16));
      i += 2;
    } else if (c === "+") out.push(0x20);
    else out.push(...utf8.encode(c));
  }
  return Uint8Array.from(out);
}

function decodeQueryPart(s: string): string {
  return new TextDecoder().decode(percentDecode(s));
}

/** Parses a filter; throws FilterParseError saying where and what went wrong. */
export function parseFilter(src: string): Expr {
  if (src.length > maxFilterLength) {
    throw new FilterParseError(maxFilterLength, `the filter is longer than ${maxFilterLength} characters`);
  }
  checkNesting(src);
  return new Parser(src).input();
}

/** Nesting of ( and { outside string literals and quoted selectors (both end at the next quote, as in the grammar). */
function checkNesting(src: string): void {
  let depth = 0;
  for (let i = 0; i < src.length; i++) {
    const c = src[i]!;
    if (c === '"' || c === "`") {
      const end = src.indexOf(c, i + 1);
      if (end < 0) return;
      i = end;
    } else if (c === "(" || c === "{") {
      if (++depth > maxFilterDepth) {
        throw new FilterParseError(i, `the filter is nested too deeply (more than ${maxFilterDepth} levels)`);
      }
    } else if (c === ")" || c === "}") {
      depth = Math.max(0, depth - 1);
    }
  }
}

type Res<T> = { end: number; value: T } | undefined;
type Rule = "or" | "and" | "not" | "paren" | "collection" | "match" | "selector" | "value" | "string";

const isWs = (c: string | undefined) => c === " " || c === "\t" || c === "\r" || c === "\n";
const isLetter = (c: string | undefined) =>
  c !== undefined && ((c >= "a" && c <= "z") || (c >= "A" && c <= "Z"));
const isDigit = (c: string | undefined) => c !== undefined && c >= "0" && c <= "9";
const isIdentRest = (c: string | undefined) => isLetter(c) || isDigit(c) || c === "_" || c === "/";
const pointerSegmentChar = /^[\p{L}\p{N}\-_.~:|]$/u;

const matchOpsWithValue: Array<[readonly string[], MatchOp, boolean]> = [
  // [words, op, whitespace optional (== and !=)]
  [["=="], "==", true],
  [["!="], "!=", true],
  [["contains"], "in", false],
  [["not", "contains"], "notIn", false],
  [["matches"], "matches", false],
  [["not", "matches"], "notMatches", false],
];

class Parser {
  readonly #src: string;
  /** Results by rule, then by position (a missing entry: not tried yet). */
  readonly #memo = new Map<Rule, Map<number, Res<unknown>>>();
  /** Errors raised while trying alternatives: any of them fails the parse (as in go-bexpr's parser). */
  readonly #errors: FilterParseError[] = [];
  /** The farthest position a terminal failed at, for the "no match" message. */
  #far = 0;

  constructor(src: string) {
    this.#src = src;
  }

  input(): Expr {
    const src = this.#src;
    let result: Expr | undefined;
    // _? "(" _? OrExpression _? ")" _? EOF
    let p = this.#ws(0);
    if (this.#lit(p, "(") >= 0) {
      const e = this.#or(this.#ws(p + 1));
      if (e) {
        const q = this.#lit(this.#ws(e.end), ")");
        if (q >= 0 && this.#eof(this.#ws(q))) result = e.value;
      }
    }
    // _? OrExpression _? EOF
    if (!result) {
      p = this.#ws(0);
      const e = this.#or(p);
      if (e && this.#eof(this.#ws(e.end))) result = e.value;
    }
    if (this.#errors.length > 0) throw this.#errors[0]!;
    if (!result) {
      const at = this.#far;
      const found = at >= src.length
        ? "end of filter"
        : JSON.stringify(String.fromCodePoint(src.codePointAt(at)!));
      throw new FilterParseError(at, `unexpected ${found}`);
    }
    return result;
  }

  // ---- terminals -------------------------------------------------------------------------------------

  #fail(p: number): -1 {
    if (p > this.#far) this.#far = p;
    return -1;
  }

  /** Zero or more whitespace characters. */
  #ws(p: number): number {
    while (isWs(this.#src[p])) p++;
    return p;
  }

  /** One or more whitespace characters, or -1. */
  #ws1(p: number): number {
    if (p < 0) return -1;
    if (!isWs(this.#src[p])) return this.#fail(p);
    return this.#ws(p);
  }

  #lit(p: number, s: string): number {
    if (p < 0) return -1;
    return this.#src.startsWith(s, p) ? p + s.length : this.#fail(p);
  }

  #eof(p: number): boolean {
    if (p >= this.#src.length) return true;
    this.#fail(p);
    return false;
  }

  #error(p: number, message: string): void {
    this.#errors.push(new FilterParseError(p, message));
  }

  #memoized<T>(rule: Rule, p: number, f: () => Res<T>): Res<T> {
    let byPos = this.#memo.get(rule);
    if (!byPos) this.#memo.set(rule, byPos = new Map());
    if (byPos.has(p)) return byPos.get(p) as Res<T>;
    const r = f();
    byPos.set(p, r);
    return r;
  }

  // ---- expressions -----------------------------------------------------------------------------------

  /** AndExpression _ "or" _ OrExpression / AndExpression / CollectionExpression */
  #or(p: number): Res<Expr> {
    return this.#memoized("or", p, () => {
      const left = this.#and(p);
      if (left) {
        const q = this.#ws1(this.#lit(this.#ws1(left.end), "or"));
        const right = q >= 0 ? this.#or(q) : undefined;
        if (right) return { end: right.end, value: { kind: "or", left: left.value, right: right.value } };
        return left;
      }
      return this.#collection(p);
    });
  }

  /** NotExpression _ "and" _ AndExpression / NotExpression */
  #and(p: number): Res<Expr> {
    return this.#memoized("and", p, () => {
      const left = this.#not(p);
      if (!left) return undefined;
      const q = this.#ws1(this.#lit(this.#ws1(left.end), "and"));
      const right = q >= 0 ? this.#and(q) : undefined;
      if (right) return { end: right.end, value: { kind: "and", left: left.value, right: right.value } };
      return left;
    });
  }

  /** "not" _ NotExpression / ParenthesizedExpression */
  #not(p: number): Res<Expr> {
    return this.#memoized("not", p, () => {
      const q = this.#ws1(this.#lit(p, "not"));
      const inner = q >= 0 ? this.#not(q) : undefined;
      if (inner) {
        // go-bexpr folds `not not x` into x.
        const e = inner.value.kind === "not" ? inner.value.expr : { kind: "not" as const, expr: inner.value };
        return { end: inner.end, value: e };
      }
      return this.#paren(p);
    });
  }

  /** "(" _? OrExpression _? ")" / MatchExpression / "(" _? OrExpression _? !")" (an error) */
  #paren(p: number): Res<Expr> {
    return this.#memoized("paren", p, () => {
      const open = this.#lit(p, "(");
      const inner = open >= 0 ? this.#or(this.#ws(open)) : undefined;
      if (inner) {
        const close = this.#lit(this.#ws(inner.end), ")");
        if (close >= 0) return { end: close, value: inner.value };
      }
      const m = this.#match(p);
      if (m) return m;
      if (inner) this.#error(this.#ws(inner.end), "unmatched parentheses");
      return undefined;
    });
  }

  /** any|all Selector _ "as" _ CollectionIdentifiers _? "{" _? OrExpression _? "}" */
  #collection(p: number): Res<Expr> {
    return this.#memoized("collection", p, () => {
      let all: boolean;
      let q = this.#lit(p, "any");
      if (q >= 0) all = false;
      else {
        q = this.#lit(p, "all");
        all = true;
      }
      q = this.#ws1(q);
      if (q < 0) return undefined;
      const sel = this.#selector(q);
      if (!sel) return undefined;
      q = this.#ws1(this.#lit(this.#ws1(sel.end), "as"));
      if (q < 0) return undefined;
      const binding = this.#bindings(q);
      if (!binding) return undefined;
      q = this.#lit(this.#ws(binding.end), "{");
      if (q < 0) return undefined;
      const inner = this.#or(this.#ws(q));
      if (!inner) return undefined;
      q = this.#lit(this.#ws(inner.end), "}");
      if (q < 0) return undefined;
      return {
        end: q,
        value: { kind: "collection", all, selector: sel.value, binding: binding.value, inner: inner.value },
      };
    });
  }

  /** Identifier _? "," _? Identifier / Identifier _? "," _? "_" / "_" _? "," _? Identifier / Identifier */
  #bindings(p: number): Res<Binding> {
    const first = this.#identifier(p);
    if (first) {
      const comma = this.#lit(this.#ws(first.end), ",");
      if (comma >= 0) {
        const at = this.#ws(comma);
        const second = this.#identifier(at);
        if (second) {
          return {
            end: second.end,
            value: { mode: "indexAndValue", index: first.value, value: second.value },
          };
        }
        const underscore = this.#lit(at, "_");
        if (underscore >= 0) return { end: underscore, value: { mode: "index", index: first.value } };
      }
    }
    const underscore = this.#lit(p, "_");
    if (underscore >= 0) {
      const comma = this.#lit(this.#ws(underscore), ",");
      const second = comma >= 0 ? this.#identifier(this.#ws(comma)) : undefined;
      if (second) return { end: second.end, value: { mode: "value", value: second.value } };
    }
    if (first) return { end: first.end, value: { mode: "default", default: first.value } };
    return undefined;
  }

  /** MatchSelectorOpValue / MatchSelectorOp / MatchValueOpSelector */
  #match(p: number): Res<Expr> {
    return this.#memoized<Expr>("match", p, () => {
      const sel = this.#selector(p);
      if (sel) {
        for (const [words, op, optionalWs] of matchOpsWithValue) {
          const q = this.#operator(sel.end, words, optionalWs);
          if (q < 0) continue;
          const v = this.#value(q);
          if (!v) break; // the operator alternatives are exclusive: at most one consumes anything here
          return { end: v.end, value: { kind: "match", op, selector: sel.value, value: v.value } };
        }
        for (
          const [words, op] of [[["is", "empty"], "empty"], [["is", "not", "empty"], "notEmpty"]] as const
        ) {
          let q = sel.end;
          for (const w of words) q = this.#lit(this.#ws1(q), w);
          if (q >= 0) return { end: q, value: { kind: "match", op, selector: sel.value } };
        }
      }
      // Value (_ "in" _ / _ "not" _ "in" _) Selector, and the "Invalid selector" error when no selector follows.
      const v = this.#value(p);
      if (!v) return undefined;
      for (const [words, op] of [[["in"], "in"], [["not", "in"], "notIn"]] as const) {
        const q = this.#operator(v.end, words, false);
        if (q < 0) continue;
        const target = this.#selector(q);
        if (target) {
          return { end: target.end, value: { kind: "match", op, selector: target.value, value: v.value } };
        }
        this.#error(q, "invalid selector");
        return undefined;
      }
      return undefined;
    });
  }

  /** `_? "==" _?` for == and !=, `_ word (_ word)* _` for the word operators; returns the end or -1. */
  #operator(p: number, words: readonly string[], optionalWs: boolean): number {
    if (optionalWs) {
      const q = this.#lit(this.#ws(p), words[0]!);
      return q < 0 ? -1 : this.#ws(q);
    }
    let q = p;
    for (const w of words) q = this.#lit(this.#ws1(q), w);
    return this.#ws1(q);
  }

  // ---- selectors and values --------------------------------------------------------------------------

  /** Identifier ("." Identifier / IndexExpression / "." [0-9]+)*  /  '"' ("/" segment)* '"' */
  #selector(p: number): Res<Selector> {
    return this.#memoized("selector", p, () => {
      const src = this.#src;
      const first = this.#identifier(p);
      if (first) {
        const path = [first.value];
        let q = first.end;
        for (;;) {
          if (src[q] === ".") {
            const id = this.#identifier(q + 1);
            if (id) {
              path.push(id.value);
              q = id.end;
              continue;
            }
          }
          const idx = this.#index(q);
          if (idx) {
            path.push(idx.value);
            q = idx.end;
            continue;
          }
          if (src[q] === "." && isDigit(src[q + 1])) {
            let e = q + 1;
            while (isDigit(src[e])) e++;
            path.push(src.slice(q + 1, e));
            q = e;
            continue;
          }
          this.#fail(q);
          return { end: q, value: path };
        }
      }
      return this.#pointer(p);
    });
  }

  /** '"' ("/" [\pL\pN-_.~:|]+)* '"': segments with ~1 → "/" and ~0 → "~" decoded (JSON Pointer). */
  #pointer(p: number): Res<Selector & { pointer?: true }> {
    const src = this.#src;
    if (src[p] !== '"') return void this.#fail(p);
    const segments: string[] = [];
    let q = p + 1;
    while (src[q] === "/") {
      let e = q + 1;
      while (e < src.length) {
        const ch = String.fromCodePoint(src.codePointAt(e)!);
        if (!pointerSegmentChar.test(ch)) break;
        e += ch.length;
      }
      if (e === q + 1) break;
      segments.push(src.slice(q + 1, e));
      q = e;
    }
    if (src[q] !== '"') return void this.#fail(q);
    // "/" + segments joined, split again on "/": no segment holds "/", and `""` is the one empty segment.
    const path = (segments.length ? segments : [""]).map((s) =>
      s.replaceAll("~1", "/").replaceAll("~0", "~")
    );
    return { end: q + 1, value: Object.assign(path, { pointer: true as const }) };
  }

  /** [a-zA-Z][a-zA-Z0-9_/]* */
  #identifier(p: number): Res<string> {
    const src = this.#src;
    if (!isLetter(src[p])) return void this.#fail(p);
    let e = p + 1;
    while (isIdentRest(src[e])) e++;
    return { end: e, value: src.slice(p, e) };
  }

  /** "[" _? StringLiteral _? "]", with errors for a missing string ("Invalid index") or "]" ("Unclosed"). */
  #index(p: number): Res<string> {
    const open = this.#lit(p, "[");
    if (open < 0) return undefined;
    const at = this.#ws(open);
    const lit = this.#string(at);
    if (!lit) {
      this.#error(at, "invalid index: expected a quoted string");
      return undefined;
    }
    const close = this.#lit(this.#ws(lit.end), "]");
    if (close < 0) {
      this.#error(this.#ws(lit.end), "unclosed index expression");
      return undefined;
    }
    return { end: close, value: lit.value };
  }

  /** Selector (as its text) / NumberLiteral / StringLiteral */
  #value(p: number): Res<string> {
    return this.#memoized("value", p, () => {
      const sel = this.#selector(p);
      if (sel) {
        const s = sel.value as Selector & { pointer?: true };
        return { end: sel.end, value: s.join(s.pointer ? "/" : ".") };
      }
      return this.#number(p) ?? this.#string(p);
    });
  }

  /** "-"? ("0" / [1-9][0-9]*) ("." [0-9]+)? followed by whitespace, ")" or the end; else an error. */
  #number(p: number): Res<string> {
    const src = this.#src;
    let q = p;
    if (src[q] === "-") q++;
    if (src[q] === "0") q++;
    else if (isDigit(src[q])) {
      while (isDigit(src[q])) q++;
    } else return void this.#fail(q);
    if (src[q] === "." && isDigit(src[q + 1])) {
      q++;
      while (isDigit(src[q])) q++;
    }
    const next = src[q];
    if (next === undefined || isWs(next) || next === ")") return { end: q, value: src.slice(p, q) };
    this.#fail(q);
    this.#error(p, "invalid number literal");
    return undefined;
  }

  /** `…` or "…" (up to the next quote: there is no escaped quote) through strconv.Unquote. */
  #string(p: number): Res<string> {
    return this.#memoized("string", p, () => {
      const src = this.#src;
      const q = src[p];
      if (q !== '"' && q !== "`") return void this.#fail(p);
      const end = src.indexOf(q, p + 1);
      if (end < 0) {
        this.#fail(src.length);
        this.#error(p, "unterminated string literal");
        return undefined;
      }
      const text = src.slice(p, end + 1);
      const value = goUnquote(text);
      if (value === undefined) {
        this.#error(p, `invalid string literal ${text}: not a valid Go string (escapes, newlines)`);
        return { end: end + 1, value: "" };
      }
      return { end: end + 1, value };
    });
  }
}
