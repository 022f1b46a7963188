// The JSON front end of the policy language (rules starting with `{`): reads JSON the way HCL v1's JSON parser
// does, which is more lenient than JSON itself (a trailing comma, text after the object, several keys before a
// colon, booleans inside lists ignored), and then flattens nested objects into multi-key items as that parser
// does, so `{"namespace":{"default":{…}}}` decodes like `namespace "default" {…}`. Written for wharf from
// the behaviour of that library.

import {
  LimitError,
  type ListType,
  type LiteralType,
  type Node,
  noPos,
  type ObjectItem,
  type ObjectList,
  type ObjectType,
  type Token,
  type TokenType,
} from "./policy_ast.ts";
import {
  digitVal,
  EOF_RUNE,
  isDecimal,
  isDigit,
  isLetter,
  maxNesting,
  punctuation,
  RuneReader,
} from "./policy_hcl.ts";

/** A JSON syntax error; HCL's JSON parser prints these without the `At` prefix. */
export class JsonSyntaxError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "JsonSyntaxError";
  }
}

class JsonScanner {
  readonly r: RuneReader;

  constructor(src: string) {
    this.r = new RuneReader(src, "json");
  }

  scan(): Token {
    const r = this.r;
    const ch = r.nextNonSpace();
    const { start, pos } = r.tokenStart();
    let type: TokenType = "ILLEGAL";
    if (isLetter(ch)) {
      let c = r.next();
      while (isLetter(c) || isDigit(c) || c === "-") c = r.next();
      if (c !== EOF_RUNE) r.unread();
      const lit = r.text(start);
      if (lit === "true" || lit === "false") type = "BOOL";
      else if (lit === "null") type = "NULL";
      else r.err("illegal char");
    } else if (isDecimal(ch)) {
      type = this.scanNumber(ch);
    } else {
      switch (ch) {
        case EOF_RUNE:
          type = "EOF";
          break;
        case '"':
          type = "STRING";
          this.scanString();
          break;
        case ".":
          type = r.scanPeriod();
          break;
        case ":":
          type = "COLON";
          break;
        case "-":
          if (isDecimal(r.peek())) type = this.scanNumber(r.next());
          else r.err("illegal char");
          break;
        default: {
          const single = punctuation.get(ch);
          if (single) type = single;
          else r.err(`illegal char: ${ch}`);
        }
      }
    }
    return { type, pos, text: r.text(start) };
  }

  scanNumber(ch: string): TokenType {
    const r = this.r;
    const zero = ch === "0";
    const before = r.offset;
    r.scanMantissa(ch);
    ch = r.next();
    if (r.scanFloatTail(ch)) return "FLOAT";
    if (ch !== EOF_RUNE) r.unread();
    if (zero && before !== r.offset) r.err("numbers cannot start with 0");
    return "NUMBER";
  }

  scanString(): void {
    const r = this.r;
    let braces = 0;
    for (;;) {
      const ch = r.next();
      if (ch === "\n" || ch === EOF_RUNE) {
        r.err("literal not terminated");
        return;
      }
      if (ch === '"') break;
      if (braces === 0 && ch === "$" && r.peek() === "{") {
        braces++;
        r.next();
      } else if (braces > 0 && ch === "{") braces++;
      if (braces > 0 && ch === "}") braces--;
      if (ch === "\\") this.scanEscape();
    }
  }

  scanEscape(): void {
    const r = this.r;
    const ch = r.next();
    if (ch !== "" && 'abfnrtv\\"'.includes(ch)) return;
    if (ch.length === 1 && ch >= "0" && ch <= "7") this.scanDigits(ch, 8, 3);
    else if (ch === "x") this.scanDigits(r.next(), 16, 2);
    else if (ch === "u") this.scanDigits(r.next(), 16, 4);
    else if (ch === "U") this.scanDigits(r.next(), 16, 8);
    else r.err("illegal char escape");
  }

  scanDigits(ch: string, base: number, n: number): void {
    const r = this.r;
    while (n > 0 && digitVal(ch) < base) {
      ch = r.next();
      n--;
    }
    if (n > 0) r.err("illegal char escape");
    r.unread();
  }
}

class EndOfInput extends Error {}

/** HCL's JSON parser keeps no positions on the tree it builds. */
function hclToken(tok: Token): Token {
  switch (tok.type) {
    case "NULL":
      return { type: "STRING", pos: noPos, text: "" };
    case "STRING":
      return { type: "STRING", pos: noPos, text: tok.text, json: true };
    default:
      return { type: tok.type, pos: noPos, text: tok.text };
  }
}

class JsonParser {
  readonly sc: JsonScanner;
  tok: Token = { type: "EOF", pos: noPos, text: "" };
  #depth = 0;

  constructor(src: string) {
    this.sc = new JsonScanner(src);
  }

  scan(): Token {
    this.tok = this.sc.scan();
    return this.tok;
  }

  nest<T>(f: () => T): T {
    if (++this.#depth > maxNesting) throw new LimitError(`objects or lists nested deeper than ${maxNesting}`);
    try {
      return f();
    } finally {
      this.#depth--;
    }
  }

  objectList(): { list: ObjectList; error?: Error } {
    const list: ObjectList = { kind: "list", items: [] };
    for (;;) {
      let item: ObjectItem;
      try {
        item = this.objectItem();
      } catch (err) {
        if (err instanceof EndOfInput) break;
        if (err instanceof JsonSyntaxError) return { list, error: err };
        throw err;
      }
      list.items.push(item);
      if (this.scan().type !== "COMMA") break;
    }
    return { list };
  }

  objectItem(): ObjectItem {
    const keys = this.objectKey();
    return { kind: "item", keys, val: this.objectValue() };
  }

  objectKey(): Token[] {
    const keys: Token[] = [];
    for (;;) {
      const tok = this.scan();
      switch (tok.type) {
        case "EOF":
          throw new EndOfInput();
        case "STRING":
          keys.push(hclToken(tok));
          break;
        case "COLON":
          if (keys.length === 0) throw new JsonSyntaxError("expected: STRING got: COLON");
          return keys;
        case "ILLEGAL":
          throw new JsonSyntaxError("illegal");
        default:
          throw new JsonSyntaxError(`expected: STRING got: ${tok.type}`);
      }
    }
  }

  objectValue(): Node {
    const tok = this.scan();
    switch (tok.type) {
      case "NUMBER":
      case "FLOAT":
      case "BOOL":
      case "NULL":
      case "STRING":
        return this.literal();
      case "LBRACE":
        return this.objectType();
      case "LBRACK":
        return this.listType();
      case "EOF":
        throw new EndOfInput();
    }
    throw new JsonSyntaxError(`Expected object value, got unknown token: ${describe(tok)}`);
  }

  object(): ObjectType {
    const tok = this.scan();
    if (tok.type === "LBRACE") return this.objectType();
    if (tok.type === "EOF") throw new EndOfInput();
    throw new JsonSyntaxError(`Expected object, got unknown token: ${describe(tok)}`);
  }

  objectType(): ObjectType {
    return this.nest(() => {
      const { list, error } = this.objectList();
      if (error && this.tok.type !== "RBRACE") throw error;
      return { kind: "object", pos: noPos, list };
    });
  }

  listType(): ListType {
    return this.nest(() => {
      const list: ListType = { kind: "listtype", pos: noPos, list: [] };
      for (;;) {
        const tok = this.scan();
        switch (tok.type) {
          case "NUMBER":
          case "FLOAT":
          case "STRING":
            list.list.push(this.literal());
            break;
          case "COMMA":
          case "BOOL":
          case "LBRACK":
            break;
          case "LBRACE":
            list.list.push(this.objectType());
            break;
          case "RBRACK":
            return list;
          default:
            throw new JsonSyntaxError(`unexpected token while parsing list: ${tok.type}`);
        }
      }
    });
  }

  literal(): LiteralType {
    return { kind: "literal", token: hclToken(this.tok) };
  }
}

function describe(tok: Token): string {
  return `${tok.pos.line}:${tok.pos.column} ${tok.type} ${tok.text}`;
}

/**
 * Parses JSON policy rules into the item tree, flattened as HCL flattens JSON. Throws JsonSyntaxError (the
 * scanner's last error wins, as in HCL), EndOfInput never (an empty input is an empty list).
 */
export function parseJsonRules(source: string): ObjectList {
  const parser = new JsonParser(source);
  let root: ObjectType | undefined;
  let error: unknown;
  try {
    root = parser.object();
  } catch (err) {
    if (err instanceof EndOfInput) error = new JsonSyntaxError("EOF token found");
    else error = err;
  }
  const scanError = parser.sc.r.error;
  if (typeof scanError === "string" && (error === undefined || error instanceof JsonSyntaxError)) {
    throw new JsonSyntaxError(scanError);
  }
  if (error !== undefined) throw error;
  const list = root!.list;
  flatten(list);
  return list;
}

/** Walks the tree and flattens every object list in it, outermost first. */
function flatten(node: Node): void {
  switch (node.kind) {
    case "list":
      flattenList(node);
      for (const item of node.items) flatten(item);
      break;
    case "item":
      flatten(node.val);
      break;
    case "object":
      flatten(node.list);
      break;
    case "listtype":
      for (const n of node.list) flatten(n);
      break;
    case "literal":
      break;
  }
}

/**
 * An item whose value is an object made only of objects becomes one item per inner key (keys joined), and one
 * whose value is a list made only of objects becomes one item per element; repeated until neither applies.
 */
function flattenList(list: ObjectList): void {
  const out: ObjectItem[] = [];
  const pending = [...list.items];
  while (pending.length > 0) {
    const item = pending.pop()!;
    const val = item.val;
    if (
      val.kind === "object" && val.list.items.length > 0 &&
      val.list.items.every((s) => s.val.kind === "object")
    ) {
      for (const sub of val.list.items) {
        pending.push({ kind: "item", keys: [...item.keys, ...sub.keys], val: sub.val });
      }
    } else if (val.kind === "listtype" && val.list.length > 0 && val.list.every((e) => e.kind === "object")) {
      for (const elem of val.list) pending.push({ kind: "item", keys: item.keys, val: elem });
    } else {
      out.push(item);
    }
  }
  list.items = out.reverse();
}
