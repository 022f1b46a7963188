// Evaluates a parsed go-bexpr filter against a JSON value; evaluation errors make the item not match.

import type { Expr, MatchOp, Selector } from "./parse.ts";

class EvalError extends Error {}

const absent = Symbol("absent");

/** True when `root` matches `expr`; a type error anywhere makes it false (Boundary: no match). */
export function evaluateFilter(expr: Expr, root: unknown): boolean {
  try {
    return evaluate(expr, root);
  } catch (err) {
    if (err instanceof EvalError) return false;
    throw err;
  }
}

function evaluate(e: Expr, root: unknown): boolean {
  switch (e.kind) {
    case "and":
      return evaluate(e.left, root) && evaluate(e.right, root);
    case "or":
      return evaluate(e.left, root) || evaluate(e.right, root);
    case "not":
      return !evaluate(e.expr, root);
    case "match":
      return match(e.op, resolve(root, e.selector), e.value ?? "", e.regex);
  }
}

export function resolve(root: unknown, selector: Selector): unknown {
  let cur: unknown = root;
  for (const seg of selector) {
    if (Array.isArray(cur)) {
      if (!/^\d+$/.test(seg)) return absent;
      cur = Number(seg) < cur.length ? cur[Number(seg)] : absent;
    } else if (typeof cur === "object" && cur !== null && Object.hasOwn(cur, seg)) {
      cur = (cur as Record<string, unknown>)[seg];
    } else return absent;
    if (cur === undefined) return absent;
  }
  return cur;
}

const negatedOf: Partial<Record<MatchOp, MatchOp>> = {
  "!=": "==",
  notEmpty: "empty",
  notIn: "in",
  notContains: "contains",
  notMatches: "matches",
};

function match(op: MatchOp, field: unknown, value: string, regex: RegExp | undefined): boolean {
  const positive = negatedOf[op];
  if (positive) return !match(positive, field, value, regex);
  if (field === absent || field === null) return op === "empty";
  switch (op) {
    case "==":
      return equalsCoerced(field, value);
    case "empty":
      if (typeof field === "string" || Array.isArray(field)) return field.length === 0;
      if (typeof field === "object") return Object.keys(field as object).length === 0;
      throw new EvalError("is empty needs a string, list or map");
    case "in":
    case "contains":
      if (typeof field === "string") return field.includes(value);
      if (Array.isArray(field)) return field.some((el) => typeof el !== "object" && equalsCoerced(el, value));
      if (typeof field === "object") return Object.hasOwn(field as object, value);
      throw new EvalError("in/contains needs a string, list or map");
    case "matches":
      if (typeof field !== "string") throw new EvalError("matches needs a string");
      regex!.lastIndex = 0;
      return regex!.test(field);
    default:
      return false;
  }
}

/** The literal is converted to the field's type first; lists and maps never equal a literal. */
export function equalsCoerced(field: unknown, value: string): boolean {
  if (typeof field === "string") return field === value;
  if (typeof field === "boolean") {
    const b = parseGoBool(value);
    if (b === undefined) throw new EvalError(`"${value}" is not a boolean`);
    return field === b;
  }
  if (typeof field === "number") {
    if (!/^-?\d+(\.\d+)?([eE][-+]?\d+)?$/.test(value)) throw new EvalError(`"${value}" is not a number`);
    return field === Number(value);
  }
  return false;
}

function parseGoBool(s: string): boolean | undefined {
  if (["1", "t", "T", "TRUE", "true", "True"].includes(s)) return true;
  if (["0", "f", "F", "FALSE", "false", "False"].includes(s)) return false;
  return undefined;
}
