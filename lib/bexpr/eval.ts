// Evaluates a parsed filter as go-bexpr v0.1.14 does inside Boundary's list handler: the item is wrapped as
// `{"item": …}` (a struct whose only field is `item`), and an evaluation error or a panic anywhere makes the
// item not match. Written from go-bexpr's documented rules and observed behaviour (docs/auth-methods.md):
//
// - a selector walks objects by key and lists by index (Go's ParseInt with base 0, "" meaning 0); a key
//   missing from an object at the last step is "not present" (==, in, contains, matches false; !=, not in,
//   not contains, not matches, is empty true); anything else that cannot be walked (a missing parent, an
//   index out of range or not a number, a scalar or null on the way, a top-level name other than `item`)
//   is an error;
// - the literal is converted to the field's type with Go's strconv (ParseBool, ParseFloat), and a value
//   that does not convert is an error; == and != on a list, an object or null are errors;
// - `in`/`contains` look up a key in an object, an element in a list (skipping elements the literal cannot
//   be converted to, failing on nested lists and objects and null) or a substring in a string;
// - `matches` compiles the pattern with RE2 (Go's regexp syntax) when an item first reaches it, so an
//   invalid pattern fails only the items whose field is present and a string;
// - `is empty` takes strings, lists and objects;
// - and/or stop at the first operand that decides; errors propagate through not, and, or.

import { RE2JS } from "re2js";
import { maxRegexSize, regexSizeEstimate } from "./regex_size.ts";
import type { Binding, Expr, MatchExpr, MatchOp, Selector } from "./parse.ts";
import { goContains, GoNumError, goParseBool, goParseFloat, goParseInt } from "./gostr.ts";
import { hasInvalidBytes } from "../gostr.ts";

/** An evaluation error or what would be a panic in go-bexpr: either way the item does not match. */
class EvalError extends Error {}

/** An index bound by `any`/`all` over a list: a Go int, compared with ParseInt rather than ParseFloat. */
class GoInt {
  constructor(readonly n: number) {}
}

/** A name bound by `any`/`all`: to a value (a key or an index) or to a path (the element). */
interface Local {
  name: string;
  path?: string[];
  value?: unknown;
}

const notPresent = Symbol("not present");

/** The struct a filter is evaluated over: its fields are the names a selector may start with. */
export type FilterRoot = Readonly<Record<string, unknown>>;

/** True when `root` (Boundary: `{item}`; Nomad binding rules: `{value, list}`) matches `expr`; an evaluation error anywhere makes it false (Boundary: no match). */
export function evaluateFilter(expr: Expr, root: FilterRoot): boolean {
  try {
    return evaluate(expr, root, []);
  } catch (err) {
    if (err instanceof EvalError || err instanceof RangeError) return false;
    throw err;
  }
}

/** An evaluation error reported to the caller (Nomad's list filters fail the whole page on one). */
export class FilterEvalError extends Error {}

/** Like evaluateFilter, but an evaluation error is thrown as a FilterEvalError instead of meaning "no match". */
export function evaluateFilterOrThrow(expr: Expr, root: FilterRoot): boolean {
  try {
    return evaluate(expr, root, []);
  } catch (err) {
    if (err instanceof EvalError || err instanceof RangeError) throw new FilterEvalError(err.message);
    throw err;
  }
}

function evaluate(e: Expr, root: FilterRoot, env: Local[]): boolean {
  switch (e.kind) {
    case "and":
      return evaluate(e.left, root, env) && evaluate(e.right, root, env);
    case "or":
      return evaluate(e.left, root, env) || evaluate(e.right, root, env);
    case "not":
      return !evaluate(e.expr, root, env);
    case "match":
      return evaluateMatch(e, root, env);
    case "collection":
      return evaluateCollection(e.all, e.selector, e.binding, e.inner, root, env);
  }
}

/** The value at `path`, `notPresent` for a key missing from an object at the last step, else an EvalError. */
function resolve(root: FilterRoot, path: Selector, env: readonly Local[] = []): unknown {
  if (path.length > 0) {
    for (let i = env.length - 1; i >= 0; i--) {
      const lv = env[i]!;
      if (path[0] !== lv.name) continue;
      if (!lv.path || lv.path.length === 0) {
        if (path.length > 1) {
          throw new EvalError(`${lv.name} is a key or an index: ${path.join(".")} is invalid`);
        }
        return lv.value;
      }
      path = [...lv.path, ...path.slice(1)];
    }
  }
  if (path.length === 0) return root;
  if (!Object.hasOwn(root, path[0]!)) {
    throw new EvalError(
      `no field ${JSON.stringify(path[0])}: selectors start with ${Object.keys(root).join(" or ")}`,
    );
  }
  let cur: unknown = root[path[0]!];
  for (let i = 1; i < path.length; i++) {
    const part = path[i]!;
    if (Array.isArray(cur)) {
      let idx: bigint;
      try {
        idx = goParseInt(part === "" ? "0" : part);
      } catch {
        throw new EvalError(`${JSON.stringify(part)} is not a list index`);
      }
      if (idx < 0n || idx >= BigInt(cur.length)) throw new EvalError(`index ${idx} is out of range`);
      cur = cur[Number(idx)] ?? null;
    } else if (isObject(cur)) {
      const next = Object.hasOwn(cur, part) ? cur[part] : undefined;
      if (next === undefined) {
        if (i === path.length - 1) return notPresent;
        throw new EvalError(`no key ${JSON.stringify(part)} at ${path.slice(0, i).join(".")}`);
      }
      cur = next;
    } else {
      throw new EvalError(`${path.slice(0, i).join(".")} is ${describeKind(cur)}, not an object or a list`);
    }
  }
  return cur;
}

function isObject(v: unknown): v is Record<string, unknown> {
  return typeof v === "object" && v !== null && !Array.isArray(v) && !(v instanceof GoInt);
}

function describeKind(v: unknown): string {
  if (v === null || v === undefined) return "null";
  if (v instanceof GoInt) return "an index";
  return `a ${typeof v}`;
}

/** What go-bexpr answers for a selector whose last key is missing from its object. */
const notPresentResult: Record<MatchOp, boolean> = {
  "==": false,
  "!=": true,
  in: false,
  notIn: true,
  empty: true,
  notEmpty: false,
  matches: false,
  notMatches: true,
};

function evaluateMatch(e: MatchExpr, root: FilterRoot, env: Local[]): boolean {
  const field = resolve(root, e.selector, env);
  if (field === notPresent) return notPresentResult[e.op];
  const raw = e.value ?? "";
  switch (e.op) {
    case "==":
      return equals(field, raw);
    case "!=":
      return !equals(field, raw);
    case "in":
      return contains(field, raw);
    case "notIn":
      return !contains(field, raw);
    case "empty":
      return isEmpty(field);
    case "notEmpty":
      return !isEmpty(field);
    case "matches":
      return matches(e, field);
    case "notMatches":
      return !matches(e, field);
  }
}

/** The literal converted to the field's kind (Go's strconv), or the literal itself for strings and containers. */
function convert(field: unknown, raw: string): unknown {
  try {
    if (typeof field === "boolean") return goParseBool(raw);
    if (typeof field === "number") return goParseFloat(raw);
    if (field instanceof GoInt) return goParseInt(raw);
  } catch (err) {
    if (err instanceof GoNumError) throw new EvalError(err.message, { cause: err });
    throw err;
  }
  return raw;
}

function equals(field: unknown, raw: string): boolean {
  if (typeof field === "string") return field === raw;
  if (typeof field === "boolean" || typeof field === "number") return convert(field, raw) === field;
  if (field instanceof GoInt) return convert(field, raw) === BigInt(field.n);
  throw new EvalError(`== and != compare strings, numbers and booleans, not ${describeKind(field)}`);
}

function contains(field: unknown, raw: string): boolean {
  if (typeof field === "string") return goContains(field, raw);
  if (Array.isArray(field)) {
    for (const el of field) {
      if (el === null || el === undefined) throw new EvalError("in/contains reached null in a list");
      if (typeof el === "string") {
        if (el === raw) return true;
      } else if (typeof el === "boolean" || typeof el === "number") {
        let v: unknown;
        try {
          v = typeof el === "boolean" ? goParseBool(raw) : goParseFloat(raw);
        } catch (err) {
          // A literal that is not this element's kind skips the element; one out of range fails.
          if (err instanceof GoNumError && err.kind === "syntax") continue;
          throw new EvalError("in/contains: the value does not convert to a list element's type");
        }
        if (v === el) return true;
      } else {
        throw new EvalError("in/contains cannot compare a list or object inside a list");
      }
    }
    return false;
  }
  if (isObject(field)) {
    return Object.hasOwn(field, raw) && field[raw] !== undefined;
  }
  convert(field, raw);
  throw new EvalError(`in/contains needs a string, list or object, not ${describeKind(field)}`);
}

function isEmpty(field: unknown): boolean {
  if (typeof field === "string" || Array.isArray(field)) return field.length === 0;
  if (isObject(field)) {
    for (const k in field) if (Object.hasOwn(field, k) && field[k] !== undefined) return false;
    return true;
  }
  throw new EvalError(`is empty needs a string, list or object, not ${describeKind(field)}`);
}

function matches(e: MatchExpr, field: unknown): boolean {
  if (typeof field !== "string") throw new EvalError(`matches needs a string, not ${describeKind(field)}`);
  e.regex ??= compileRegex(e.value ?? "");
  if (!e.regex.re) throw new EvalError(e.regex.error);
  return e.regex.re.test(field);
}

/** RE2 syntax as Go's regexp.Compile takes it (Perl classes and flags, Unicode groups, UTF-8 patterns only). */
function compileRegex(pattern: string): NonNullable<MatchExpr["regex"]> {
  if (hasInvalidBytes(pattern)) return { error: "error parsing regexp: invalid UTF-8" };
  // Refused before re2js spends time on it (lib/bexpr/regex_size.ts); Go's regexp words a far larger limit so.
  const size = regexSizeEstimate(pattern);
  if (size > maxRegexSize) {
    return {
      error:
        `error parsing regexp: expression too large: about ${size} instructions, more than ${maxRegexSize}`,
    };
  }
  try {
    const re = RE2JS.compile(pattern);
    return { re: { test: (s: string) => re.test(s) } };
  } catch (err) {
    const message = (err as Error).message;
    // Go takes a capture group name twice (`(?P<a>x)(?P<a>y)`); re2js refuses it. Names play no part in
    // whether a pattern matches, so the groups are compiled as non-capturing ones.
    if (message.includes("duplicate capture group name")) {
      try {
        const re = RE2JS.compile(withoutGroupNames(pattern));
        return { re: { test: (s: string) => re.test(s) } };
      } catch {
        // fall through: report the original error
      }
    }
    return { error: message };
  }
}

/** `(?P<name>` and `(?<name>` turned into `(?:`, outside escapes, `\Q…\E` and character classes. */
function withoutGroupNames(p: string): string {
  let out = "";
  let i = 0;
  let inClass = false;
  while (i < p.length) {
    if (p.startsWith("\\Q", i)) {
      const end = p.indexOf("\\E", i + 2);
      const stop = end < 0 ? p.length : end + 2;
      out += p.slice(i, stop);
      i = stop;
      continue;
    }
    const c = p[i]!;
    if (c === "\\") {
      out += p.slice(i, i + 2);
      i += 2;
    } else if (inClass) {
      const posix = p.startsWith("[:", i) ? p.indexOf(":]", i + 2) : -1;
      const stop = posix >= 0 ? posix + 2 : i + 1;
      if (posix < 0 && c === "]") inClass = false;
      out += p.slice(i, stop);
      i = stop;
    } else if (c === "[") {
      inClass = true;
      let stop = i + 1;
      if (p[stop] === "^") stop++;
      if (p[stop] === "]") stop++; // a leading ] is literal
      out += p.slice(i, stop);
      i = stop;
    } else {
      const named = /^\(\?P?<[^>]*>/.exec(p.slice(i, i + 260));
      if (named) {
        out += "(?:";
        i += named[0].length;
      } else {
        out += c;
        i++;
      }
    }
  }
  return out;
}

function evaluateCollection(
  all: boolean,
  selector: Selector,
  binding: Binding,
  inner: Expr,
  root: FilterRoot,
  env: Local[],
): boolean {
  const v = resolve(root, selector, env);
  if (v === notPresent) return all;
  let keys: string[] | undefined;
  let length: number;
  if (Array.isArray(v)) length = v.length;
  else if (isObject(v)) {
    keys = Object.keys(v).filter((k) => v[k] !== undefined);
    length = keys.length;
  } else {
    throw new EvalError(`${selector.join(".")} is not a list or an object`);
  }
  for (let i = 0; i < length; i++) {
    if (binding.mode === "indexAndValue" && binding.index === binding.value) {
      throw new EvalError(`${binding.index} cannot name both the index and the value`);
    }
    const locals: Local[] = [...env];
    if (keys) {
      const key = keys[i]!;
      if (binding.default) locals.push({ name: binding.default, value: key });
      if (binding.index) locals.push({ name: binding.index, value: key });
      if (binding.value) locals.push({ name: binding.value, path: [...selector, key] });
    } else {
      if (binding.index) locals.push({ name: binding.index, value: new GoInt(i) });
      const path = [...selector, String(i)];
      if (binding.default) locals.push({ name: binding.default, path });
      if (binding.value) locals.push({ name: binding.value, path });
    }
    const r = evaluate(inner, root, locals);
    if (r && !all) return true;
    if (!r && all) return false;
  }
  return all;
}
